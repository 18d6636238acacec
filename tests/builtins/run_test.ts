import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call, helloTool } from "./helpers.ts";
import { pidsWith } from "../process/helpers.ts";

Deno.test("run: cd changes the session's working directory for later calls", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, "sub"));
  await Deno.writeTextFile(join(dir.path, "sub", "here.txt"), "in sub\n");
  await using t = await builtinRuntime(dir.path);
  const first = await call(t.rt, "run", { command: "cd sub && pwd" });
  assert.equal(first.said, join(dir.path, "sub") + "\n");
  const second = await call(t.rt, "run", { command: "pwd" });
  assert.equal(second.said, first.said);
  assert.equal(t.rt.session.cwd, join(dir.path, "sub"));
  // Other builtins resolve relative paths against it too.
  assert.equal((await call(t.rt, "read", { path: "here.txt" })).said, "1\tin sub\n");
  // A cwd argument alone does not move the session.
  await call(t.rt, "run", { command: "true", cwd: ".." });
  assert.equal(t.rt.session.cwd, join(dir.path, "sub"));
});

Deno.test("run interleaves stdout and stderr and reports a non-zero exit status", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "run", { command: "echo one; echo two >&2; echo three; exit 3" });
  assert.equal(r.is_error, true);
  assert.equal(r.said, "one\ntwo\nthree\n[magi: exit status 3]\n");
  const ok = await call(t.rt, "run", { command: "true" });
  assert.equal(ok.said, "(no output)\n");
  assert.equal(ok.is_error, false);
});

Deno.test("run: a timeout ends the whole group, grandchild included, and keeps the output", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const pidFile = join(dir.path, "grandchild.pid");
  const r = await call(t.rt, "run", {
    command: `echo started; bash -c 'echo $$ > ${pidFile}; sleep 60; true'; echo never`,
    timeout_seconds: 1,
  });
  assert.equal(r.is_error, true);
  assert.equal(r.said, "started\n[magi: timed out after 1 s; its process group was ended]\n");
  assert.ok(Number(await Deno.readTextFile(pidFile)) > 0, "the grandchild never started");
  // Gone, or a zombie waiting to be reaped (the group got TERM, then KILL after a grace). Found
  // by its command line: in the sandbox's PID namespace the pid it wrote is not its pid here.
  let left = pidsWith(pidFile);
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    left = pidsWith(pidFile);
  }
  assert.deepEqual(left, [], `grandchild ${left} still runs`);
});

Deno.test("run: stdin is closed, and a background child does not hang the call", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "run", {
    command: 'if read -r line; then echo "got $line"; else echo "stdin closed"; fi; cat; echo done',
    timeout_seconds: 30,
  });
  assert.equal(r.said, "stdin closed\ndone\n");
  const bg = await call(t.rt, "run", { command: "sleep 60 & echo back", timeout_seconds: 30 });
  assert.equal(bg.is_error, false, bg.said);
  assert.equal(bg.said, "back\n");
});

Deno.test("run: 50 MB of output is bounded by the pipeline and spilled whole", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "run", {
    command: "yes 'a line of output' | head -c 50000000; echo; echo the end",
  });
  assert.equal(r.is_error, false);
  assert.ok(r.said.length <= t.rt.limits.saidBytes + 512, `said is ${r.said.length} bytes`);
  assert.ok(r.said.startsWith("a line of output\n"));
  assert.ok(r.said.endsWith("the end\n"), r.said.slice(-200));
  assert.ok(r.spill !== null);
  assert.equal((await Deno.stat(r.spill)).size, 50_000_000 + "\nthe end\n".length);
});

Deno.test("run: output that is not UTF-8 is shown safely", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "run", { command: "printf 'caf\\xe9 ok\\n'" });
  assert.equal(r.is_error, false);
  assert.equal(r.said, "caf\ufffd ok\n");
});

Deno.test("run: the environment has the tool links first on PATH and the MAGI_ context", async () => {
  await using dir = await tempDir();
  const tools = await helloTool(dir.path);
  await using t = await builtinRuntime(dir.path, {}, { toolsDirs: [tools] });
  const r = await call(t.rt, "run", { command: 'hello-tool world; echo "$MAGI_CWD"' });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, `hello world\n${dir.path}\n`);
});
