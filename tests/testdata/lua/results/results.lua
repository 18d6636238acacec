-- Tools whose run returns each shape SPEC S3.3 and S3.6 allow, and shapes they do not.
local function returns(name, value)
  magi.tool(name, { description = "Returns " .. name, run = function() return value end })
end

returns("ret_string", "plain text")
returns("ret_said_shown", { said = "for the model", shown = "for the person" })
returns("ret_said_number", { said = 42, shown = 1.5 })
returns("ret_said_error", { said = "it broke", is_error = true })
returns("ret_function", function() end)
returns("ret_list", { 1, 2, 3 })
returns("ret_foo", { foo = 1 })
returns("ret_number", 42)
returns("ret_true", true)
returns("ret_said_table", { said = { "a" } })
returns("ret_shown_function", { said = "ok", shown = function() end })
returns("ret_ask_table", { ask = { "which?" } })
returns("ret_choice_table", { ask = "which?", choices = { "a", { "b" } } })
magi.tool("ret_nothing", { description = "Returns nothing", run = function() end })
