magi.tool("lua_twin", { description = "The Lua twin", run = function() return "from lua" end })
