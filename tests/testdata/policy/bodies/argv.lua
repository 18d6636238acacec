-- A Lua body that starts a program with the words it is given.
magi.tool("exec_argv", {
  description = "Start a program with arguments",
  needs = {
    type = "object",
    properties = {
      program = { type = "string" },
      argv = { type = "array", items = { type = "string" } },
      cwd = { type = "string" },
    },
    required = { "program" },
  },
  run = function(args)
    local ok, out, status, err = pcall(magi.exec, args.program, args.argv or {}, { cwd = args.cwd })
    if not ok then return { said = tostring(out), is_error = true } end
    return out
  end,
})
