-- The Lua side of magi's engine (see prelude.ts). prelude.ts fills in __HOOK_INSTRUCTIONS__
-- and __PRELUDE_NAME__ before the chunk runs.
local host = __magi_host
__magi_host = nil
local G = _G
local type, pairs, next, select, tostring, tonumber = type, pairs, next, select, tostring, tonumber
local setmetatable, rawlen, raw_error = setmetatable, rawlen, error
local raw_pcall, raw_xpcall, raw_load, collectgarbage = pcall, xpcall, load, collectgarbage
local sformat, sbyte, ssub, sfind, sgsub, smatch = string.format, string.byte, string.sub, string.find, string.gsub, string.match
local tconcat, tsort = table.concat, table.sort
local math_type, huge = math.type, math.huge
local utf8_char = utf8.char
local co_running, co_create, co_resume, co_status = coroutine.running, coroutine.create, coroutine.resume, coroutine.status
local sethook, getinfo, traceback = debug.sethook, debug.getinfo, debug.traceback
local HOOK_COUNT = __HOOK_INSTRUCTIONS__

----------------------------------------------------------------------------------------------
-- JSON
----------------------------------------------------------------------------------------------
local json = {}
local NULL = setmetatable({}, { __tostring = function() return "null" end, __name = "json.null" })
json.null = NULL
local ARRAYS = setmetatable({}, { __mode = "k" })

function json.array(t)
  t = t or {}
  if type(t) ~= "table" then raw_error("json.array expects a table", 2) end
  ARRAYS[t] = true
  return t
end

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function escape_char(c) return escapes[c] or sformat("\\u%04x", sbyte(c)) end
local function encode_string(s) return '"' .. sgsub(s, '[%c"\\]', escape_char) .. '"' end

local function encode_number(v, path)
  if math_type(v) == "integer" then return sformat("%d", v) end
  if v ~= v or v == huge or v == -huge then
    raw_error(path .. ": cannot encode " .. tostring(v) .. " as JSON", 0)
  end
  local s = sformat("%.14g", v)
  if tonumber(s) ~= v then s = sformat("%.17g", v) end
  return s
end

local encode_value
local function encode_table(t, path, stack)
  if stack[t] then raw_error(path .. ": cannot encode a table that contains itself", 0) end
  stack[t] = true
  local count, n = 0, rawlen(t)
  for _ in next, t do count = count + 1 end
  local is_array = ARRAYS[t] or (count > 0 and count == n)
  if is_array and not ARRAYS[t] then
    for i = 1, n do if t[i] == nil then is_array = false break end end
  end
  local out
  if is_array then
    local parts = {}
    for i = 1, n do parts[i] = encode_value(t[i], path .. "[" .. i .. "]", stack) end
    out = "[" .. tconcat(parts, ",") .. "]"
  else
    local keys = {}
    for k in next, t do
      local tk = type(k)
      if tk == "number" then k = tostring(k)
      elseif tk ~= "string" then raw_error(path .. ": cannot encode a " .. tk .. " key", 0) end
      keys[#keys + 1] = k
    end
    tsort(keys)
    local parts = {}
    for i, k in ipairs(keys) do
      local v = t[k]
      if v == nil then v = t[tonumber(k)] end
      parts[i] = encode_string(k) .. ":" .. encode_value(v, path .. "." .. k, stack)
    end
    out = "{" .. tconcat(parts, ",") .. "}"
  end
  stack[t] = nil
  return out
end

encode_value = function(v, path, stack)
  local tv = type(v)
  if v == nil or v == NULL then return "null"
  elseif tv == "boolean" then return v and "true" or "false"
  elseif tv == "number" then return encode_number(v, path)
  elseif tv == "string" then return encode_string(v)
  elseif tv == "table" then return encode_table(v, path, stack)
  end
  raw_error(path .. ": cannot encode a " .. tv .. " as JSON", 0)
end

function json.encode(v)
  local ok, res = raw_pcall(encode_value, v, "value", {})
  if not ok then raw_error("json.encode: " .. tostring(res), 2) end
  return res
end

local function decode_error(i, msg) raw_error(sformat("%s at character %d", msg, i), 0) end
local function skip(s, i) local _, e = sfind(s, "^[ \n\r\t]*", i) return e + 1 end
local unescape = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n',
  r = '\r', t = '\t' }

local function decode_string(s, i)
  local parts, j = {}, i + 1
  while true do
    local a = sfind(s, '["\\]', j)
    if not a then decode_error(i, "unterminated string") end
    parts[#parts + 1] = ssub(s, j, a - 1)
    if ssub(s, a, a) == '"' then return tconcat(parts), a + 1 end
    local c = ssub(s, a + 1, a + 1)
    if c == "u" then
      local hex = smatch(s, "^%x%x%x%x", a + 2)
      if not hex then decode_error(a, "bad \\u escape") end
      local cp, after = tonumber(hex, 16), a + 6
      if cp >= 0xD800 and cp <= 0xDBFF then
        local lo = smatch(s, "^\\u(%x%x%x%x)", after)
        local l = lo and tonumber(lo, 16)
        if l and l >= 0xDC00 and l <= 0xDFFF then
          cp, after = 0x10000 + (cp - 0xD800) * 0x400 + (l - 0xDC00), after + 6
        end
      end
      parts[#parts + 1] = utf8_char(cp)
      j = after
    else
      local r = unescape[c]
      if not r then decode_error(a, "bad escape") end
      parts[#parts + 1] = r
      j = a + 2
    end
  end
end

-- After a member of an array or object: true and the index past `close` where it ends there,
-- else false and the index of the next member (past the comma).
local function after_member(s, i, close)
  i = skip(s, i)
  local c = ssub(s, i, i)
  if c == close then return true, i + 1 end
  if c ~= "," then decode_error(i, "expected ',' or '" .. close .. "'") end
  return false, skip(s, i + 1)
end

local decode_value
local function decode_array(s, i)
  local t, n = json.array({}), 0
  i = skip(s, i + 1)
  if ssub(s, i, i) == "]" then return t, i + 1 end
  local last
  repeat
    local v
    v, i = decode_value(s, i)
    n = n + 1
    if v == nil then v = NULL end
    t[n] = v
    last, i = after_member(s, i, "]")
  until last
  return t, i
end

local function decode_object(s, i)
  local t = {}
  i = skip(s, i + 1)
  if ssub(s, i, i) == "}" then return t, i + 1 end
  local last
  repeat
    if ssub(s, i, i) ~= '"' then decode_error(i, "expected a string key") end
    local k
    k, i = decode_string(s, i)
    i = skip(s, i)
    if ssub(s, i, i) ~= ":" then decode_error(i, "expected ':'") end
    local v
    v, i = decode_value(s, skip(s, i + 1))
    t[k] = v
    last, i = after_member(s, i, "}")
  until last
  return t, i
end

local literals = { ["true"] = true, ["false"] = false }
decode_value = function(s, i)
  i = skip(s, i)
  local c = ssub(s, i, i)
  if c == "{" then return decode_object(s, i)
  elseif c == "[" then return decode_array(s, i)
  elseif c == '"' then return decode_string(s, i)
  end
  local word = smatch(s, "^%a+", i)
  if word == "null" then return nil, i + 4 end
  if word and literals[word] ~= nil then return literals[word], i + #word end
  local num = smatch(s, "^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  if num and tonumber(num) then return tonumber(num), i + #num end
  decode_error(i, "unexpected " .. (c == "" and "end of text" or sformat("%q", c)))
end

function json.decode(s)
  if type(s) ~= "string" then raw_error("json.decode expects a string", 2) end
  local ok, v, i = raw_pcall(decode_value, s, 1)
  if ok and skip(s, i) <= #s then ok, v = false, sformat("trailing text at character %d", i) end
  if not ok then raw_error("json.decode: " .. tostring(v), 2) end
  return v
end

----------------------------------------------------------------------------------------------
-- Calls, time limits and coroutines
----------------------------------------------------------------------------------------------
local calls = setmetatable({}, { __mode = "k" })   -- a call's own thread → call id
local nested = setmetatable({}, { __mode = "k" })  -- a coroutine made during a call → call id
local TIMEOUT = setmetatable({}, { __tostring = function() return "time limit reached" end })

local function hook_for(id)
  return function() if host.expired(id) then raw_error(TIMEOUT, 0) end end
end

local function current_call(what)
  local co = co_running()
  local id = calls[co]
  if id then return id end
  if nested[co] then raw_error(what .. " cannot be called inside a coroutine", 3) end
  raw_error(what .. " can only be called while a tool runs, not when its file loads", 3)
end

-- A time limit caught by pcall is raised again: a body cannot swallow it.
local function pass(ok, ...)
  if not ok and (...) == TIMEOUT then raw_error(TIMEOUT, 0) end
  return ok, ...
end
local function safe_pcall(f, ...) return pass(raw_pcall(f, ...)) end
local function safe_xpcall(f, handler, ...)
  return pass(raw_xpcall(f, function(e) if e == TIMEOUT then return e end return handler(e) end, ...))
end

local function inherit(co)
  local me = co_running()
  local id = calls[me] or nested[me]
  if id then
    nested[co] = id
    sethook(co, hook_for(id), "", HOOK_COUNT)
  end
  return co
end
local coroutine_api = {
  create = function(f) return inherit(co_create(f)) end,
  resume = function(co, ...) return pass(co_resume(co, ...)) end,
  wrap = function(f)
    local co = inherit(co_create(f))
    return function(...)
      local function unwrap(ok, ...)
        if not ok then raw_error((...), 0) end
        return ...
      end
      return unwrap(pass(co_resume(co, ...)))
    end
  end,
  isyieldable = coroutine.isyieldable,
  running = co_running,
  status = co_status,
  yield = coroutine.yield,
  close = coroutine.close,
}

----------------------------------------------------------------------------------------------
-- The magi table
----------------------------------------------------------------------------------------------
local loading = nil   -- the file being loaded: { source = chunkname, decls = {} }
local runs = {}       -- declaration id → run function
local names = {}      -- declaration id → the tool's name, for errors about what run returned
local next_id = 0

local magi = { json = json }

function magi.tool(name, spec)
  if not loading then raw_error("magi.tool can only be called when a file loads", 2) end
  local info = getinfo(2, "Sl")
  local line = info and info.currentline or 0
  local decl = { line = line, name = name }
  if type(name) ~= "string" then
    decl.problem = "the tool's name must be a string"
  elseif type(spec) ~= "table" then
    decl.problem = "magi.tool needs a table as its second argument"
  else
    next_id = next_id + 1
    decl.id = next_id
    if spec.run ~= nil and type(spec.run) ~= "function" then
      decl.problem = "run must be a function"
    else
      runs[next_id] = spec.run
      names[next_id] = name
      decl.has_run = spec.run ~= nil
    end
    local fields = {}
    for _, k in ipairs({ "description", "needs", "transport", "program", "argv", "stdin",
      "builtin", "peer", "tool" }) do
      fields[k] = spec[k]
    end
    local ok, encoded = raw_pcall(encode_value, fields, "spec", {})
    if ok then decl.spec = encoded else decl.problem = tostring(encoded) end
  end
  loading.decls[#loading.decls + 1] = decl
end

-- An error of magi.exec at the declaration file's line that called it (magi.exec and this
-- function are tail calls, so the frame is found, not counted); none when the body itself
-- tail-called magi.exec (the error's "where" then names the declaration).
local function exec_error(message)
  for level = 2, 40 do
    local info = getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and info.source ~= "__PRELUDE_NAME__" and ssub(info.source, 1, 1) == "@" then
      raw_error(message, level)
    end
  end
  raw_error(message, 0)
end

local function exec_reply(program, opts, ok, out, status, stderr)
  if not ok then exec_error("magi.exec: " .. tostring(out)) end
  if opts.check and status ~= 0 then
    local tail = stderr ~= "" and (": " .. sgsub(stderr, "%s+$", "")) or ""
    exec_error(sformat('magi.exec: "%s" failed with %s%s', program,
      status and ("exit status " .. status) or "a signal", tail))
  end
  if not opts.raw then out = sgsub(out, "[\r\n]+$", "") end
  return out, status, stderr
end

function magi.exec(program, args, opts)
  local id = current_call("magi.exec")
  if type(program) ~= "string" or program == "" then
    raw_error("magi.exec: the program must be a non-empty string", 2)
  end
  if args ~= nil and type(args) ~= "table" then raw_error("magi.exec: args must be a list", 2) end
  if opts ~= nil and type(opts) ~= "table" then raw_error("magi.exec: opts must be a table", 2) end
  opts = opts or {}
  local list = {}
  for i, a in ipairs(args or {}) do
    if type(a) ~= "string" and type(a) ~= "number" then
      raw_error("magi.exec: args[" .. i .. "] must be a string", 2)
    end
    list[i] = tostring(a)
  end
  local request = encode_value({ program = program, args = json.array(list), cwd = opts.cwd,
    stdin = opts.stdin, timeout = opts.timeout }, "magi.exec", {})
  return exec_reply(program, opts, host.exec(id, request):await())
end

function magi.cwd() return host.cwd(current_call("magi.cwd")) end

function magi.env(name)
  local id = current_call("magi.env")
  if name == nil then return json.decode(host.env(id)) end
  if type(name) ~= "string" then raw_error("magi.env: the name must be a string", 2) end
  return host.env(id, name)
end

local function print_(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  host.print(tconcat(parts, "\t"))
end

----------------------------------------------------------------------------------------------
-- The sandbox: each file gets its own globals over copies of the libraries it may use
----------------------------------------------------------------------------------------------
local function copy(t) local c = {} for k, v in pairs(t) do c[k] = v end return c end

local function new_env()
  local env = {
    _VERSION = G._VERSION, assert = G.assert, error = G.error, getmetatable = G.getmetatable,
    ipairs = G.ipairs, next = G.next, pairs = G.pairs, rawequal = G.rawequal, rawget = G.rawget,
    rawlen = G.rawlen, rawset = G.rawset, select = G.select, setmetatable = G.setmetatable,
    tonumber = G.tonumber, tostring = G.tostring, type = G.type,
    pcall = safe_pcall, xpcall = safe_xpcall, print = print_,
    coroutine = copy(coroutine_api), math = copy(G.math), string = copy(G.string),
    table = copy(G.table), utf8 = copy(G.utf8), magi = magi,
  }
  env.string.dump = nil
  env._G = env
  return env
end

-- Where in the declaration files an error happened: the innermost frame outside the prelude.
local function user_frame()
  for level = 2, 40 do
    local info = getinfo(level, "Sl")
    if not info then return nil end
    if info.what ~= "C" and info.source ~= "__PRELUDE_NAME__" and ssub(info.source, 1, 1) == "@" then
      return ssub(info.source, 2) .. ":" .. info.currentline
    end
  end
end

local function handler(e)
  if e == TIMEOUT then return e end
  return { message = tostring(e), where = user_frame() }
end

local function load_file(text, chunkname, load_call)
  local fn, err = raw_load(text, chunkname, "t", new_env())
  if not fn then return encode_value({ error = err }, "load", {}) end
  loading = { decls = {} }
  calls[co_running()] = nil
  sethook(hook_for(load_call), "", HOOK_COUNT)
  local ok, res = raw_xpcall(fn, handler)
  sethook()
  local decls = loading.decls
  loading = nil
  if not ok then
    for _, d in ipairs(decls) do if d.id then runs[d.id], names[d.id] = nil, nil end end
    if res == TIMEOUT then return '{"timeout":true}' end
    if type(res) ~= "table" then res = { message = tostring(res) } end
    return encode_value({ error = res.message, where = res.where }, "load", {})
  end
  return encode_value({ decls = json.array(decls) }, "load", {})
end

-- What a run may return (SPEC S3.3, S3.6): a string (said), {said=…, shown=…, is_error=…} or a
-- question {ask=…, choices={…}}. Anything else is an error naming the tool and what came back,
-- never text made up from it. Inside the table a number is taken as text (tostring); tables,
-- functions and booleans are refused.
local RESULT_FORMS = "return a string or {said=…, shown=…}"
local function text_of(v, what, name)
  local tv = type(v)
  if tv == "string" then return v end
  if tv == "number" then return tostring(v) end
  raw_error(sformat('run of "%s" returned %s as a %s; it must be a string', name, what, tv), 0)
end

local function result_of(name, r)
  local tr = type(r)
  if tr == "string" then return { said = r } end
  if r == nil then raw_error(sformat('run of "%s" returned nothing; %s', name, RESULT_FORMS), 0) end
  if tr ~= "table" then raw_error(sformat('run of "%s" returned a %s; %s', name, tr, RESULT_FORMS), 0) end
  if r.ask ~= nil then
    local choices = nil
    if r.choices ~= nil then
      if type(r.choices) ~= "table" then
        raw_error(sformat('run of "%s" returned choices as a %s; it must be a list of strings',
          name, type(r.choices)), 0)
      end
      choices = {}
      for i, c in ipairs(r.choices) do choices[i] = text_of(c, "choices[" .. i .. "]", name) end
      json.array(choices)
    end
    return { ask = text_of(r.ask, "ask", name), choices = choices }
  end
  if r.said == nil then
    raw_error(sformat('run of "%s" returned a table without said or ask; %s', name, RESULT_FORMS), 0)
  end
  return {
    said = text_of(r.said, "said", name),
    shown = r.shown ~= nil and text_of(r.shown, "shown", name) or nil,
    is_error = r.is_error == true or nil,
  }
end

local function dispatch(id, call_id, args_json)
  local run = runs[id]
  if not run then return '{"error":"the tool has no run function"}' end
  -- The time-limit hook of this thread is magi's (set from the host, so it can also yield to
  -- let magi's event loop run); coroutines made here get a Lua hook (see inherit).
  local me = co_running()
  calls[me] = call_id
  local ok, res = raw_xpcall(function() return result_of(names[id], run(json.decode(args_json))) end, handler)
  calls[me] = nil
  if not ok then
    if res == TIMEOUT then return '{"timeout":true}' end
    if type(res) ~= "table" then res = { message = tostring(res) } end
    return encode_value({ error = res.message, where = res.where }, "result", {})
  end
  local encoded_ok, encoded = raw_pcall(encode_value, res, "result", {})
  if not encoded_ok then return encode_value({ error = tostring(encoded) }, "result", {}) end
  return encoded
end

local function collect() collectgarbage("collect") end

return load_file, dispatch, collect, TIMEOUT
