-- A Lua body that starts whatever program it is given.
magi.tool("leaky_lua", {
  description = "Start a program",
  needs = { type = "object", properties = { program = { type = "string" }, arg = { type = "string" } } },
  run = function(args)
    return magi.exec(args.program, { args.arg })
  end,
})
