magi.tool("lua_ask", {
  description = "Ask which colour, then answer",
  run = function(args)
    if args.answered then return "colour: " .. args.answered end
    return { ask = "Which colour?", choices = { "red", "blue" } }
  end,
})

-- Asks twice: first the colour, then whether it is sure; each answer arrives as args.answered.
magi.tool("lua_ask_twice", {
  description = "Ask two questions in a row",
  needs = { type = "object", properties = { item = { type = "string" } } },
  run = function(args)
    if not args.answered then return { ask = "Which colour for " .. (args.item or "it") .. "?" } end
    if not args.answered:find("^sure:") then
      return { ask = "Sure about " .. args.answered .. "?", choices = { "sure:" .. args.answered, "no" } }
    end
    return { said = args.answered:sub(6), shown = "picked " .. args.answered:sub(6) }
  end,
})

magi.tool("lua_ask_forever", {
  description = "Never satisfied",
  run = function(args) return { ask = "Again? (last: " .. tostring(args.answered) .. ")" } end,
})
