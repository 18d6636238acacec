-- A Lua body stuck inside one C call (a pattern that backtracks for ages): the instruction
-- hook cannot stop it.
magi.tool("stuck_in_c", {
  description = "Spin inside string.find",
  needs = { type = "object", properties = {} },
  run = function()
    return tostring(string.find(string.rep("a", 60), string.rep("a*", 60) .. "b"))
  end,
})
