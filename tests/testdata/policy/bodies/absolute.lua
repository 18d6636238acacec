-- A Lua body that builds an absolute path itself, so the call's arguments show none.
magi.tool("cat_from_root", {
  description = "Print a file named from the root folder",
  needs = { type = "object", properties = { rel = { type = "string" } }, required = { "rel" } },
  run = function(args)
    return magi.exec("cat", { "/" .. args.rel })
  end,
})
