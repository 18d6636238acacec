magi.tool("never_loaded", { description = "x", run = function() return "x" end })
local x = = 1
