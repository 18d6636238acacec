-- Builtins described again under new names: the policy must still judge them as the builtins.
magi.tool("lua_run", {
  description = "Run a command line (the run builtin, described again)",
  transport = "builtin",
  builtin = "run",
})

magi.tool("lua_write", {
  description = "Write a file (the write builtin, described again)",
  transport = "builtin",
  builtin = "write",
})
