-- Tools that show the host API and the pipeline.
magi.tool("lua_echo", {
  description = "Echo the arguments as JSON",
  needs = {
    type = "object",
    properties = { text = { type = "string" }, n = { type = "integer" } },
    required = { "text" },
  },
  run = function(args)
    return { said = magi.json.encode(args), shown = "echo: " .. args.text }
  end,
})

magi.tool("lua_env", {
  description = "Print an environment variable and the call's folder",
  needs = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
  run = function(args)
    return (magi.env(args.name) or "(unset)") .. "\n" .. magi.cwd() .. "\n" .. (magi.env("MAGI_CWD") or "")
  end,
})

magi.tool("lua_big", {
  description = "Print many lines",
  run = function()
    local lines = {}
    for i = 1, 5000 do lines[i] = "line " .. i end
    return table.concat(lines, "\n")
  end,
})

magi.tool("lua_exec", {
  description = "Run a shell line and report stdout, status and stderr",
  needs = { type = "object", properties = { line = { type = "string" }, check = { type = "boolean" } } },
  run = function(args)
    local out, status, err = magi.exec("sh", { "-c", args.line }, { check = args.check, stdin = "from-stdin" })
    return string.format("out=[%s] status=%s err=[%s]", out, tostring(status), err)
  end,
})

magi.tool("lua_json", {
  description = "Decode JSON and encode it again",
  needs = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
  run = function(args)
    local v = magi.json.decode(args.text)
    return magi.json.encode(v)
  end,
})

magi.tool("lua_err", {
  description = "Fail with a Lua error",
  run = function()
    local t = nil
    return t.field
  end,
})

magi.tool("lua_os", {
  description = "Try to reach os.execute",
  run = function()
    return os.execute("echo escaped")
  end,
})

magi.tool("lua_sandbox", {
  description = "List what the sandbox leaves",
  run = function()
    local names = {}
    for k in pairs(_G) do names[#names + 1] = k end
    table.sort(names)
    return table.concat(names, " ")
  end,
})

magi.tool("lua_print", {
  description = "Print a line (to stderr) and return",
  run = function()
    print("hello from lua", 42)
    return "printed"
  end,
})

magi.tool("lua_where", {
  description = "Wait a little, then say the call's folder and a variable",
  run = function()
    magi.exec("sleep", { "0.2" })
    return magi.cwd() .. " " .. (magi.env("LUA_MARK") or "")
  end,
})
