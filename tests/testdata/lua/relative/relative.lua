magi.tool("hello_relative", {
  description = "A program beside this file, through the command transport",
  transport = "command",
  program = "./bin/hello",
  needs = { type = "object", properties = { who = { type = "string" } }, required = { "who" } },
  argv = { { field = "who" } },
})
