import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { makeTool, tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const TOOLS = join(TESTDATA, "tools");
const SECRET = 's3cr"et-VALUE/with+special chars';

function processesWith(marker: string): string[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid,args"] }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.includes(marker));
}

Deno.test("typed interface: fields become argv (positionals, flags, values, literals) and JSON stdin", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, {
    name: "typed-echo",
    args: {
      words: ["a b", "c"],
      names: ["x", "y"],
      level: 3,
      verbose: true,
      content: 'say "hi"\n',
      opts: { k: 1 },
    },
  });
  assert.equal(r.is_error, false, r.said);
  assert.equal(
    r.said,
    '[sub]\n[--name]\n[x]\n[--name]\n[y]\n[--level=3]\n[--verbose]\n[--]\n[a b]\n[c]\nstdin={"content":"say \\"hi\\"\\n","opts":{"k":1}}\n',
  );
});

Deno.test("a schema violation is an error result naming the field, and nothing runs", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const missing = await runTool(t.rt, { name: "typed-echo", args: {} });
  assert.equal(missing.is_error, true);
  assert.match(missing.said, /field "words" is required/);
  const wrong = await runTool(t.rt, {
    name: "typed-echo",
    args: '{"words": ["a"], "level": "high"}',
  });
  assert.match(wrong.said, /field "level" must be integer/);
  const notJson = await runTool(t.rt, { name: "typed-echo", args: "{words:" });
  assert.equal(notJson.is_error, true);
  assert.match(notJson.said, /not JSON/);
});

Deno.test("generic interface: args as a list or a space-split string, and stdin", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const list = await runTool(t.rt, {
    name: "generic-args",
    args: { args: ["one two", "three"], stdin: "in" },
  });
  assert.equal(list.said, "[one two]\n[three]\nstdin=in\n");
  const text = await runTool(t.rt, { name: "generic-args", args: { args: "one  two" } });
  assert.equal(text.said, "[one]\n[two]\n");
});

Deno.test("the word stdin in the help makes stdin required", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const decl = t.rt.registry.get("count-stdin")!.declaration;
  assert.deepEqual(decl.parameters.required, ["stdin"]);
  const without = await runTool(t.rt, { name: "count-stdin", args: {} });
  assert.match(without.said, /field "stdin" is required/);
  const withIt = await runTool(t.rt, { name: "count-stdin", args: { stdin: "12345" } });
  assert.equal(withIt.said, "5 bytes\n");
});

Deno.test("a non-zero exit is an error result with the status and stderr's tail", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "fail-loud", args: { args: ["7"] } });
  assert.equal(r.is_error, true);
  assert.equal(
    r.said,
    "partial output\n[magi: exit status 7]\n[stderr]\nsomething went wrong: disk on fire\n",
  );
});

Deno.test("secrets are masked in plain, base64, URL and JSON forms and across writes", async () => {
  await using t = await testRuntime({
    toolsDirs: [TOOLS],
    env: { MY_SECRET_TOKEN: SECRET, MY_MULTI_KEY: "first-line-aaaa\nsecond-line-bbbb\nthird" },
  });
  const r = await runTool(t.rt, { name: "leak", args: {} });
  assert.equal(r.is_error, false, r.said);
  assert.ok(!r.said.includes("VALUE"), r.said);
  for (const prefix of ["", "a", "ab"]) {
    const encoded = Buffer.from(prefix + SECRET).toString("base64");
    assert.ok(
      !r.said.includes(encoded.slice(4, -4)),
      `base64 after ${prefix.length} bytes: ${r.said}`,
    );
  }
  assert.match(r.said, /^plain: \$MY_SECRET_TOKEN$/m);
  assert.match(r.said, /^url: \$MY_SECRET_TOKEN$/m);
  assert.match(r.said, /^json: \$MY_SECRET_TOKEN$/m);
  assert.match(r.said, /^split: \$MY_SECRET_TOKEN$/m);
  assert.match(r.said, /^line: \$MY_MULTI_KEY$/m);
});

Deno.test("50 MB of output is bounded, keeps the failure line, and spills the whole output", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "flood", args: { args: ["1300000"] } });
  assert.equal(r.is_error, false);
  assert.ok(new TextEncoder().encode(r.said).length <= 16384);
  assert.ok(r.said.startsWith("line 1 of some long build log output\n"));
  assert.ok(r.said.endsWith("line 1300000 of some long build log output\n"));
  assert.ok(r.said.includes("  line 650000: error: the build broke at step 650000"));
  assert.ok(r.spill);
  assert.ok(r.said.includes(`the whole output is in ${r.spill}`));
  const size = (await Deno.stat(r.spill)).size;
  assert.ok(size > 50_000_000, `${size}`);
  assert.ok(new TextEncoder().encode(r.shown).length <= 65536);
  assert.ok(r.shown.length > r.said.length);
});

Deno.test("one giant line is cut inside the line", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "giant-line", args: { args: ["1000000"] } });
  assert.match(r.said, /^x{5000,}\n\[magi: \d+ bytes \(0 lines\) dropped/);
  assert.match(r.said, /x{5000,}\n$/);
});

Deno.test("invalid UTF-8 is shown safely and binary output is described", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const text = await runTool(t.rt, { name: "bad-bytes", args: { args: ["utf8"] } });
  assert.equal(text.said, "café \ufffd\ufffd ok \ufffd\n");
  const binary = await runTool(t.rt, { name: "bad-bytes", args: { args: ["binary"] } });
  assert.match(
    binary.said,
    /^\[magi: binary output, \d+ bytes, not shown; the whole output is in \/.*\]\n$/,
  );
  assert.ok(binary.spill);
});

Deno.test("a tool past its time limit is ended with its grandchild, keeping what it printed", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const marker = `magi-sleeper-${crypto.randomUUID()}`;
  const r = await runTool(t.rt, { name: "sleeper", args: { args: [marker], timeout_seconds: 1 } });
  assert.equal(r.is_error, true);
  assert.equal(
    r.said,
    "before sleeping\n[magi: timed out after 1 s; its process group was ended]\n",
  );
  assert.deepEqual(processesWith(marker), []);
});

Deno.test("a daemon holding stdout open does not hang the call and is not left running", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const marker = `magi-daemon-${crypto.randomUUID()}`;
  const r = await runTool(t.rt, {
    name: "daemonize",
    args: { args: [marker], timeout_seconds: 30 },
  });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "started the daemon\n");
  assert.deepEqual(processesWith(marker), []);
});

Deno.test("tools reach each other through PATH, but never shadow a system command", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  assert.ok(t.rt.registry.get("ls"), "the fixture ls is still a tool");
  const r = await runTool(t.rt, { name: "caller", args: {} });
  const [one, two, lsPath] = r.said.trim().split("\n");
  assert.deepEqual([one, two], ["[hello]", "[two words]"]);
  assert.ok(!lsPath.startsWith(t.rt.linksDir!), `ls resolved to ${lsPath}`);
  assert.ok([...Deno.readDirSync(t.rt.linksDir!)].some((e) => e.name === "generic-args"));
});

Deno.test("a tool's $MAGI_SHOWN rendering is shown; said stays short", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "shows", args: {} });
  assert.equal(r.said, "patched 3 files\n");
  assert.equal(r.shown, "the whole diff, for the person\n+ added\n- removed\n");
});

Deno.test("every call gets MAGI_CWD and a cwd resolved against the session's directory", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  await Deno.mkdir(join(t.rt.session.cwd, "sub"));
  const r = await runTool(t.rt, { name: "env-dump", args: { cwd: "sub" } });
  const sub = join(t.rt.session.cwd, "sub");
  assert.match(r.said, /^MAGI_SHOWN=\/.+$/m);
  const lines = r.said.trim().split("\n");
  assert.ok(lines.includes(`MAGI_CWD=${sub}`), r.said);
  assert.equal(lines.at(-1), `pwd=${sub}`);
  // Context with no value is not set: this call belongs to no session.
  assert.ok(!lines.some((l) => /^MAGI_(SESSION|PARENT|MAIL_DIR)=/.test(l)), r.said);
  const missing = await runTool(t.rt, { name: "env-dump", args: { cwd: "nowhere" } });
  assert.equal(missing.is_error, true);
  assert.match(missing.said, /cwd ".*nowhere" does not exist/);
});

Deno.test("an unknown tool is an error result, not a crash", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "no-such-tool", args: {} });
  assert.equal(r.is_error, true);
  assert.match(r.said, /unknown tool "no-such-tool"/);
});

Deno.test("the spill file and stderr's tail are masked too", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS], env: { MY_SECRET_TOKEN: SECRET } });
  const r = await runTool(t.rt, { name: "leak-lots", args: {} });
  assert.equal(r.is_error, true);
  assert.ok(r.spill, "the output was cut and spilled");
  const spilled = await Deno.readTextFile(r.spill);
  assert.ok(!spilled.includes(SECRET));
  assert.equal(spilled.split("token=$MY_SECRET_TOKEN").length - 1, 2000);
  assert.ok(!r.said.includes(SECRET) && !r.shown.includes(SECRET));
  assert.match(r.said, /\[stderr\]\nthe key is \$MY_SECRET_TOKEN\n$/);
});

Deno.test("making a spill file removes spill files older than a week", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  await Deno.mkdir(t.rt.spillDir, { recursive: true });
  const old = join(t.rt.spillDir, "2020-01-01-old-abc.out");
  const recent = join(t.rt.spillDir, "recent-abc.out");
  await Deno.writeTextFile(old, "old");
  await Deno.writeTextFile(recent, "recent");
  await Deno.utime(old, new Date("2020-01-01"), new Date("2020-01-01"));
  const r = await runTool(t.rt, { name: "flood", args: { args: ["5000"] } });
  assert.ok(r.spill);
  assert.ok(await Deno.stat(recent));
  await assert.rejects(() => Deno.stat(old), Deno.errors.NotFound);
});

Deno.test("stdin mode field gives the raw value of one field", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, {
    name: "field-stdin",
    args: { name: "a.txt", content: 'say "hi"\n\\ok' },
  });
  assert.equal(r.said, 'a.txt: 12 bytes\nsay "hi"\n\\ok\n');
});

Deno.test("a tool killed by a signal is an error result naming the signal", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "self-kill", args: {} });
  assert.equal(r.is_error, true);
  assert.equal(r.said, "about to crash\n[magi: killed by signal SIGSEGV]\n");
});

Deno.test("a tool that ignores TERM is killed after the grace period, with its children", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const marker = `magi-stubborn-${crypto.randomUUID()}`;
  const r = await runTool(t.rt, {
    name: "stubborn",
    args: { args: [marker], timeout_seconds: 0.5 },
  });
  assert.equal(r.is_error, true);
  assert.equal(
    r.said,
    "ignoring TERM\n[magi: timed out after 0.5 s; its process group was ended]\n",
  );
  assert.deepEqual(processesWith(marker), []);
});

Deno.test("config limits bound said and shown", async () => {
  await using t = await testRuntime({
    toolsDirs: [TOOLS],
    config: { limits: { said_bytes: 2048, shown_bytes: 4096 } },
  });
  const r = await runTool(t.rt, { name: "flood", args: { args: ["3000"] } });
  assert.ok(new TextEncoder().encode(r.said).length <= 2048, `${r.said.length}`);
  assert.ok(new TextEncoder().encode(r.shown).length <= 4096);
  assert.ok(r.shown.length > r.said.length);
  assert.match(r.said, /\[magi: \d+ bytes \(\d+ lines\) dropped/);
});

Deno.test("stderr's kept tail never starts inside a secret", async () => {
  const token = "tok_Abc123XyZ987qwertyUIOP555";
  await using t = await testRuntime({ toolsDirs: [TOOLS], env: { MY_SECRET_TOKEN: token } });
  const r = await runTool(t.rt, { name: "stderr-cut", args: {} });
  assert.equal(r.is_error, true);
  for (let i = 0; i + 6 <= token.length; i++) {
    assert.ok(
      !r.said.includes(token.slice(i, i + 6)),
      `a piece of the secret: ${token.slice(i, i + 6)}`,
    );
  }
  assert.match(r.said, /\[magi: exit status 3\]\n\[stderr\]\n0+\n/);
  assert.ok(new TextEncoder().encode(r.said).length < 2000);
});

Deno.test("a time limit beyond what a timer holds means no limit, not an instant time-out", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, {
    name: "generic-args",
    args: { args: ["x"], timeout_seconds: 3e6 },
  });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "[x]\n");
});

Deno.test("said stays within its limit with stderr's tail appended", async () => {
  await using t = await testRuntime({
    toolsDirs: [TOOLS],
    config: { limits: { said_bytes: 4096 } },
  });
  const r = await runTool(t.rt, { name: "stderr-cut", args: {} });
  assert.ok(
    new TextEncoder().encode(r.said).length <= 4096,
    `${new TextEncoder().encode(r.said).length}`,
  );
  assert.match(r.said, /\[magi: exit status 3\]/);
});

Deno.test("a tool that declares cwd still gets magi's timeout_seconds", async () => {
  await using dir = await tempDir();
  await makeTool(
    dir.path,
    "own-cwd",
    "#!/bin/sh\n# own-cwd — sleep; takes its own cwd field.\n# own-cwd [--cwd D]\n" +
      'case "$1" in --help) sed -n \'2,3s/^# //p\' "$0"; exit 0 ;; esac\nexec sleep 30\n',
    {
      type: "object",
      properties: { cwd: { type: "string" } },
      "x-magi": { argv: [{ flag: "--cwd", field: "cwd" }] },
    },
  );
  await using t = await testRuntime({ toolsDirs: [dir.path] });
  const r = await runTool(t.rt, { name: "own-cwd", args: { cwd: "x", timeout_seconds: 0.5 } });
  assert.equal(r.is_error, true);
  assert.match(r.said, /timed out after 0.5 s/);
});

Deno.test("a huge timeout_seconds does not stop an in-process builtin at once", async () => {
  await using t = await testRuntime({ toolsDirs: [TOOLS] });
  const r = await runTool(t.rt, { name: "read", args: { path: ".", timeout_seconds: 3e6 } });
  assert.equal(r.is_error, false, r.said);
});
