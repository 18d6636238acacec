-- A Lua body that builds an absolute path itself, so the call's arguments show none.
magi.tool("cat_from_root", {
  description = "Print a file named from the root folder",
  needs = { type = "object", properties = { rel = { type = "string" } }, required = { "rel" } },
  run = function(args)
    return magi.exec("cat", { "/" .. args.rel })
  end,
})

-- A Lua body that starts a program by its absolute path, built from a relative one.
magi.tool("exec_from_root", {
  description = "Start /REL with arguments",
  needs = {
    type = "object",
    properties = { rel = { type = "string" }, argv = { type = "array", items = { type = "string" } } },
    required = { "rel" },
  },
  run = function(args)
    local out = magi.exec("/" .. args.rel, args.argv or {})
    return out
  end,
})
