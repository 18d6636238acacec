-- One tool per transport, side by side.
magi.tool("t_lua", {
  description = "Said and shown from a Lua body",
  needs = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
  run = function(args)
    return { said = magi.env(args.name) or "", shown = "value of " .. args.name }
  end,
})

magi.tool("t_command", {
  description = "printenv through the command transport",
  transport = "command",
  program = "printenv",
  needs = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
  argv = { { field = "name" } },
})

magi.tool("t_command_lines", {
  description = "seq through the command transport",
  transport = "command",
  program = "seq",
  needs = { type = "object", properties = { count = { type = "integer" } }, required = { "count" } },
  argv = { { literal = "1" }, { field = "count" } },
})

magi.tool("t_builtin", {
  description = "Read a file (the read builtin, described again)",
  transport = "builtin",
  builtin = "read",
})

magi.tool("t_casper", {
  description = "An environment variable, from the test peer",
  transport = "casper",
  peer = "testpeer",
  tool = "peer_env",
})
