import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";
import { builtinRuntime, call, helloTool } from "./helpers.ts";

const FIVE = ["read", "write", "edit", "grep", "run"];

Deno.test("magi builtin edit --help prints the two-line contract", async () => {
  const run = await magi(["builtin", "edit", "--help"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    run.stdout,
    "Replace old_string with new_string in a file; old_string must match exactly once unless replace_all.\n" +
      "edit <path> [--all] < JSON {old_string, new_string} on stdin\n",
  );
});

Deno.test("magi builtin parses argv and stdin through the x-magi mapping", async () => {
  await using dir = await tempDir();
  await using home = await tempDir();
  const opts = { cwd: dir.path, home: home.path };
  const w = await magi(["builtin", "write", "notes/a.txt"], { ...opts, stdin: "alpha\nbeta\n" });
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stdout, /^wrote 2 lines to notes\/a.txt \(new file\)\n--- \/dev\/null\n/);
  const e = await magi(["builtin", "edit", "notes/a.txt"], {
    ...opts,
    stdin: JSON.stringify({ old_string: "beta", new_string: 'gamma "quoted"' }),
  });
  assert.equal(e.code, 0, e.stderr);
  assert.match(e.stdout, /^patched notes\/a.txt: \+1 \u22121\n/);
  const g = await magi(["builtin", "grep", "gam+a", "notes", "--limit", "1"], opts);
  assert.equal(g.stdout, 'notes/a.txt:2:gamma "quoted"\n');
  const bad = await magi(["builtin", "grep", "x", "--limit", "many"], opts);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /grep: --limit expects a whole number, got "many"/);
});

Deno.test("all five builtins work through magi call", async () => {
  await using dir = await tempDir();
  await using home = await tempDir();
  const opts = { cwd: dir.path, home: home.path };
  const w = await magi(
    ["call", "write", JSON.stringify({ path: "f.txt", content: "one\n" })],
    opts,
  );
  assert.equal(w.code, 0, w.stderr);
  const e = await magi(
    ["call", "edit", JSON.stringify({ path: "f.txt", old_string: "one", new_string: "two" })],
    opts,
  );
  assert.equal(e.code, 0, e.stderr);
  const r = await magi(["call", "read", '{"path":"f.txt"}', "--json"], opts);
  assert.equal(JSON.parse(r.stdout).said, "1\ttwo\n");
  const g = await magi(["call", "grep", '{"pattern":"tw"}'], opts);
  assert.equal(g.stdout, "f.txt:1:two\n");
  const x = await magi(["call", "run", '{"command":"cat f.txt; exit 4"}'], opts);
  assert.equal(x.code, 1);
  assert.equal(x.stdout, "two\n[magi: exit status 4]\n");
});

Deno.test("the five declarations stay small (context economy)", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const declarations = FIVE.map((name) => t.rt.registry.get(name)!.declaration);
  assert.deepEqual(declarations.map((d) => d.name), FIVE);
  const size = new TextEncoder().encode(JSON.stringify(declarations)).length;
  console.log(`the five builtins' declarations: ${size} bytes of JSON (limit 5000)`);
  assert.ok(size < 5000, `${size} bytes`);
  assert.ok(!JSON.stringify(declarations).includes("x-magi"));
});

Deno.test("a run line reaches a tools_dir tool and the write builtin by name through PATH", async () => {
  await using dir = await tempDir();
  const tools = await helloTool(dir.path);
  // This machine has /usr/bin/write (util-linux), which magi must not shadow; so the
  // session gets a PATH without it, made of the few programs the line needs.
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  for (const program of ["bash", "cat", "sh"]) {
    const found = new Deno.Command("bash", { args: ["-c", `command -v ${program}`] }).outputSync();
    await Deno.symlink(new TextDecoder().decode(found.stdout).trim(), join(bin, program));
  }
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await using t = await builtinRuntime(work, {}, { toolsDirs: [tools], env: { PATH: bin } });
  const r = await call(t.rt, "run", {
    command: "hello-tool you && printf 'hi\\nthere\\n' | write out.txt && cat out.txt",
    timeout_seconds: 60,
  });
  assert.equal(r.is_error, false, r.said);
  assert.match(r.said, /^hello you\nwrote 2 lines to out.txt \(new file\)\n[^]*\nhi\nthere\n$/);
  assert.equal(await Deno.readTextFile(join(work, "out.txt")), "hi\nthere\n");
});

Deno.test("builtin shims are on the links PATH except where a system command has the name", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const links = new Set([...Deno.readDirSync(t.rt.linksDir!)].map((e) => e.name));
  const systemPath = Deno.env.get("PATH") ?? "";
  const onSystem = (name: string) =>
    systemPath.split(":").some((d) => {
      try {
        return Deno.statSync(join(d, name)).isFile;
      } catch {
        return false;
      }
    });
  for (const name of FIVE) assert.equal(links.has(name), !onSystem(name), name);
  // On this machine: /usr/bin/grep and /usr/bin/write exist; edit and run do not.
  if (!onSystem("edit")) {
    const script = await Deno.readTextFile(join(t.rt.linksDir!, "edit"));
    assert.match(script, /^#!\/bin\/sh\n# magi builtin edit\nexec .* builtin edit "\$@"\n$/);
  }
});
