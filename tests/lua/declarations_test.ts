import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";
import { pidsWith } from "../process/helpers.ts";

const LUA = join(TESTDATA, "lua");

/** The bodies here start `sh` and `sleep`: the policy allows those two by rule. */
const POLICY = {
  rules: [{ tool: "run", command: ["sh *", "sleep *"], decision: "allow" }],
};

function luaRuntime(dirs: string[], extra: Record<string, unknown> = {}) {
  return testRuntime({
    config: { lua_dirs: dirs, shipped_tools: false, policy: POLICY, ...extra },
  });
}

Deno.test("a file with a syntax error beside a good file: one stderr line with file and line, the good file loads", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  const broken = t.warnings.filter((w) => w.includes("broken.lua"));
  assert.equal(broken.length, 1, t.warnings.join("\n"));
  assert.match(broken[0], /broken\.lua:2: unexpected symbol near '='/);
  assert.equal(t.rt.registry.get("never_loaded"), undefined);
  const echo = t.rt.registry.get("lua_echo");
  assert.equal(echo?.origin.source, "lua");
  assert.deepEqual(echo?.declaration, {
    name: "lua_echo",
    description: "Echo the arguments as JSON",
    parameters: {
      type: "object",
      properties: { text: { type: "string" }, n: { type: "integer" } },
      required: ["text"],
    },
  });
  const r = await runTool(t.rt, { name: "lua_echo", args: { text: "héllo", n: 3 } });
  assert.deepEqual(r, {
    name: "lua_echo",
    said: '{"n":3,"text":"héllo"}',
    shown: "echo: héllo",
    is_error: false,
    spill: null,
  });
});

Deno.test("bad declarations cost only themselves, each with one line naming file and line", async () => {
  await using t = await luaRuntime([join(LUA, "decls")]);
  const file = join(LUA, "decls", "decls.lua");
  const lines = t.warnings.filter((w) => w.includes(file));
  assert.match(
    lines.find((l) => l.includes("no_description"))!,
    /decls\.lua:1: .*description is required/,
  );
  assert.match(
    lines.find((l) => l.includes("bad_schema"))!,
    /decls\.lua:3: .*needs: the schema is not valid JSON Schema/,
  );
  assert.match(
    lines.find((l) => l.includes("bad_transport"))!,
    /decls\.lua:9: .*transport must be one of/,
  );
  const dup = lines.find((l) => l.includes('"dup"'))!;
  assert.match(dup, /decls\.lua:13 left out: lua .*decls\.lua:11 has that name/);
  assert.equal(lines.length, 4, lines.join("\n"));
  assert.equal((await runTool(t.rt, { name: "dup", args: {} })).said, "first");
  assert.equal((await runTool(t.rt, { name: "still_fine", args: {} })).said, "fine");
});

Deno.test("a Lua error is an error result carrying the message and file:line; the next call works", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  const r = await runTool(t.rt, { name: "lua_err", args: {} });
  assert.equal(r.is_error, true);
  assert.match(r.said, /Lua error: .*good\.lua:53: attempt to index a nil value \(local 't'\)/);
  assert.equal((await runTool(t.rt, { name: "lua_echo", args: { text: "x" } })).is_error, false);
});

Deno.test("os.execute is unavailable: os, io, package, debug, load, dofile, require are gone", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  const r = await runTool(t.rt, { name: "lua_os", args: {} });
  assert.equal(r.is_error, true);
  assert.match(r.said, /attempt to index a nil value \(global 'os'\)/);
  assert.ok(!r.said.includes("escaped"));
  const globals = (await runTool(t.rt, { name: "lua_sandbox", args: {} })).said.split(" ");
  for (const gone of ["os", "io", "package", "debug", "load", "loadfile", "dofile", "require"]) {
    assert.ok(!globals.includes(gone), `${gone} is still there`);
  }
  for (const kept of ["magi", "string", "table", "math", "pcall", "print"]) {
    assert.ok(globals.includes(kept), `${kept} is missing`);
  }
});

Deno.test("magi.exec: stdout, status and stderr as data; check=true makes a failure an error", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  // `exit` is no program the policy knows: the person's own call approves it.
  const ok = await runTool(t.rt, {
    name: "lua_exec",
    args: { line: "cat; echo; echo oops >&2; exit 3" },
    caller: "person",
  });
  assert.equal(ok.is_error, false, ok.said);
  assert.equal(ok.said, "out=[from-stdin] status=3 err=[oops\n]");
  const checked = await runTool(t.rt, {
    name: "lua_exec",
    args: { line: "exit 4", check: true },
    caller: "person",
  });
  assert.equal(checked.is_error, true);
  assert.match(checked.said, /magi\.exec: "sh" failed with exit status 4/);
  // Where: the line of the body that called magi.exec, not magi's own prelude.
  assert.match(checked.said, /Lua error: \S*good\.lua:35: magi\.exec/);
  const links = await runTool(t.rt, {
    name: "lua_exec",
    args: { line: 'echo "$MAGI_CWD"' },
    caller: "person",
  });
  assert.equal(links.said, `out=[${t.rt.session.cwd}] status=0 err=[]`);
});

Deno.test("magi.json round-trips objects, lists, unicode and escapes", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  const text = '{"a":[1,2.5,"x\\ny",{"b":true}],"c":"\\u00e9\\ud83d\\ude00","d":[],"e":{}}';
  const r = await runTool(t.rt, { name: "lua_json", args: { text } });
  assert.equal(r.is_error, false, r.said);
  assert.deepEqual(JSON.parse(r.said), JSON.parse(text));
});

Deno.test("print goes to stderr, never into the result", async () => {
  await using t = await luaRuntime([join(LUA, "basic")]);
  const r = await runTool(t.rt, { name: "lua_print", args: {} });
  assert.equal(r.said, "printed");
  assert.ok(t.warnings.includes("lua: hello from lua\t42"), t.warnings.join("\n"));
});

Deno.test("a runaway loop is stopped at the call's timeout_seconds; the next call on the engine works", async () => {
  await using t = await luaRuntime([join(LUA, "limits")]);
  for (const name of ["lua_loop", "lua_pcall_loop"]) {
    const r = await runTool(t.rt, { name, args: { timeout_seconds: 0.3 } });
    assert.equal(r.is_error, true);
    assert.match(r.said, new RegExp(`Lua body of "${name}" ran past its time limit of 0.3 s`));
    assert.equal((await runTool(t.rt, { name: "lua_ok", args: {} })).said, "ok");
  }
});

Deno.test("a memory bomb hits the cap from config and is an error result; the next call works", async () => {
  await using t = await luaRuntime([join(LUA, "limits")], {
    limits: { lua_memory_bytes: 4 * 1024 * 1024 },
  });
  const r = await runTool(t.rt, { name: "lua_memory", args: {} });
  assert.equal(r.is_error, true);
  assert.match(r.said, /the Lua heap reached its cap of 4194304 bytes/);
  assert.equal((await runTool(t.rt, { name: "lua_ok", args: {} })).said, "ok");
});

Deno.test("a Lua tool and a tools_dir tool with the same name: Lua wins, one line names both", async () => {
  await using t = await testRuntime({
    config: { lua_dirs: [join(LUA, "collide-lua")], shipped_tools: false },
    toolsDirs: [join(LUA, "collide-dir")],
  });
  const tool = t.rt.registry.get("lua_twin");
  assert.equal(tool?.origin.source, "lua");
  const lines = t.warnings.filter((w) => w.includes("lua_twin") && w.includes("left out"));
  assert.equal(lines.length, 1);
  assert.match(
    lines[0],
    /tool "lua_twin" from tools_dir .*collide-dir.* left out: lua .*twin\.lua:1 has that name/,
  );
  assert.equal((await runTool(t.rt, { name: "lua_twin", args: {} })).said, "from lua");
});

Deno.test("a warm start reads declarations from the cache and starts the engine only at the first call", async () => {
  await using first = await luaRuntime([join(LUA, "basic")]);
  const { createRuntime } = await import("../../lib/runtime/runtime.ts");
  const warnings: string[] = [];
  const rt = await createRuntime({
    cwd: first.home,
    env: { ...first.rt.env },
    configFlag: join(first.home, "config.jsonc"),
    warn: (m) => void warnings.push(m),
  });
  assert.deepEqual(
    rt.registry.get("lua_echo")?.declaration,
    first.rt.registry.get("lua_echo")?.declaration,
  );
  assert.equal(warnings.filter((w) => w.includes("broken.lua")).length, 1);
  const r = await runTool(rt, { name: "lua_echo", args: { text: "warm" } });
  assert.equal(r.shown, "echo: warm");
});

Deno.test("calls on the one engine run side by side, each with its own folder and environment", async () => {
  await using a = await tempDir();
  await using b = await tempDir();
  // Both folders are roots (the system temp folder they lie in is none).
  await using t = await luaRuntime([join(LUA, "basic")], { roots: [a.path, b.path] });
  const [ra, rb] = await Promise.all([
    runTool(t.rt, { name: "lua_where", args: { cwd: a.path } }),
    runTool(t.rt, { name: "lua_where", args: { cwd: b.path } }),
  ]);
  assert.equal(ra.said, `${a.path} `);
  assert.equal(rb.said, `${b.path} `);
});

Deno.test("a cancelled call stops its Lua body and the program it waits for", async () => {
  await using t = await luaRuntime([join(LUA, "limits"), join(LUA, "basic")]);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const r = await runTool(t.rt, { name: "lua_loop", args: {}, signal: controller.signal });
  assert.equal(r.is_error, true);
  assert.match(r.said, /cancelled/);
  // The cancel lands once the program runs: a sleep of a duration no other process has.
  const again = new AbortController();
  const line = `sleep 30.${Math.floor(Math.random() * 1e6)}`;
  const waitingCall = runTool(t.rt, { name: "lua_exec", args: { line }, signal: again.signal });
  for (let i = 0; i < 400 && pidsWith(line).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  again.abort();
  const waiting = await waitingCall;
  assert.equal(waiting.is_error, true);
  assert.match(waiting.said, /"sh" was cancelled/);
  assert.equal((await runTool(t.rt, { name: "lua_ok", args: {} })).said, "ok");
});

Deno.test("a busy Lua body gives way: another call finishes while it computes", async () => {
  await using t = await luaRuntime([join(LUA, "limits")]);
  // The busy body would run 30 s: the quick call's result comes while it still runs, then
  // the busy one is cancelled (no race against a clock).
  const stop = new AbortController();
  let busyEnded = false;
  const busy = runTool(t.rt, {
    name: "lua_loop",
    args: { timeout_seconds: 30 },
    signal: stop.signal,
  }).finally(() => busyEnded = true);
  const quick = await runTool(t.rt, { name: "lua_ok", args: {} });
  assert.equal(quick.said, "ok");
  assert.equal(busyEnded, false, "the busy body was still running");
  stop.abort();
  const ended = await busy;
  assert.equal(ended.is_error, true);
  assert.match(ended.said, /cancelled/);
});

Deno.test("a command declaration's program path is relative to its file; the call runs in the call's folder", async () => {
  await using dir = await tempDir("magi-where-");
  // The call's folder is a root (the system temp folder it lies in is none).
  await using t = await luaRuntime([join(LUA, "relative")], { roots: [dir.path] });
  const r = await runTool(t.rt, { name: "hello_relative", args: { who: "you", cwd: dir.path } });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, `hello you from ${dir.path.split("/").pop()}\n`);
});

Deno.test("a file broken after a warm start: its tool's call is an error result saying so", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "mine.lua");
  await Deno.writeTextFile(
    file,
    'magi.tool("mine", { description = "Mine", run = function() return "v1" end })\n',
  );
  await using first = await luaRuntime([dir.path]);
  assert.ok(first.rt.registry.get("mine"));
  const { createRuntime } = await import("../../lib/runtime/runtime.ts");
  const warm = await createRuntime({
    cwd: first.home,
    env: first.rt.env,
    configFlag: join(first.home, "config.jsonc"),
    warn: () => {},
  });
  await Deno.writeTextFile(file, "magi.tool(\n");
  const r = await runTool(warm, { name: "mine", args: {} });
  assert.equal(r.is_error, true);
  assert.match(r.said, /no longer loads: .*mine\.lua:2: unexpected symbol near <eof>/);
});
