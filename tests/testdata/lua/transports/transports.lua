-- One tool per transport, side by side. Each prints an environment variable's value and
-- then many lines, so a test can see the pipeline mask and bound every transport.
magi.tool("t_lua", {
  description = "A variable and many lines, from a Lua body",
  needs = {
    type = "object",
    properties = { name = { type = "string" }, lines = { type = "integer" } },
    required = { "name", "lines" },
  },
  run = function(args)
    local out = { magi.env(args.name) or "" }
    for i = 1, args.lines do out[#out + 1] = "line " .. i end
    return { said = table.concat(out, "\n"), shown = "value of " .. args.name }
  end,
})

magi.tool("t_command", {
  description = "A variable and many lines, from sh through the command transport",
  transport = "command",
  program = "sh",
  needs = {
    type = "object",
    properties = { name = { type = "string" }, lines = { type = "integer" } },
    required = { "name", "lines" },
  },
  argv = { { literal = { "-c", 'printenv "$1"; seq 1 "$2"', "sh" } }, { field = "name" }, { field = "lines" } },
})

magi.tool("t_builtin", {
  description = "Read a file (the read builtin, described again)",
  transport = "builtin",
  builtin = "read",
})

magi.tool("t_casper", {
  description = "A variable and many lines, from the test peer",
  transport = "casper",
  peer = "testpeer",
  tool = "peer_env",
  needs = {
    type = "object",
    properties = { name = { type = "string" }, lines = { type = "integer" } },
    required = { "name", "lines" },
  },
})
