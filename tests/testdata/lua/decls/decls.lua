magi.tool("no_description", { run = function() return "x" end })

magi.tool("bad_schema", {
  description = "A schema that is not JSON Schema",
  needs = { type = "object", properties = { x = { type = "no-such-type" } } },
  run = function() return "x" end,
})

magi.tool("bad_transport", { description = "x", transport = "carrier-pigeon" })

magi.tool("dup", { description = "The first dup", run = function() return "first" end })

magi.tool("dup", { description = "The second dup", run = function() return "second" end })

magi.tool("still_fine", { description = "Declared after the bad ones", run = function() return "fine" end })
