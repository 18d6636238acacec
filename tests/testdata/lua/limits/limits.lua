magi.tool("lua_loop", {
  description = "Loop forever",
  run = function() while true do end end,
})

magi.tool("lua_pcall_loop", {
  description = "Loop forever inside pcall",
  run = function()
    while true do pcall(function() while true do end end) end
  end,
})

magi.tool("lua_memory", {
  description = "Allocate without end",
  run = function()
    local t = {}
    local s = "x"
    while true do s = s .. s; t[#t + 1] = s end
  end,
})

magi.tool("lua_ok", {
  description = "Answer ok",
  run = function() return "ok" end,
})
