import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, magiCommand, tempDir, TESTDATA } from "./helpers.ts";

const TOOLS = join(TESTDATA, "tools");

Deno.test("magi call --json prints {name, said, shown, is_error, spill}; exit 1 for an error result", async () => {
  const ok = await magi(["call", "shows", "--json", "--tools-dir", TOOLS]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout), {
    name: "shows",
    said: "patched 3 files\n",
    shown: "the whole diff, for the person\n+ added\n- removed\n",
    is_error: false,
    spill: null,
  });
  const failed = await magi(["call", "fail-loud", '{"args":["4"]}', "--tools-dir", TOOLS]);
  assert.equal(failed.code, 1);
  assert.match(failed.stdout, /\[magi: exit status 4\]/);
});

Deno.test("magi call reads the arguments from stdin with -", async () => {
  const run = await magi(["call", "generic-args", "-", "--tools-dir", TOOLS], {
    stdin: '{"args": ["from stdin"]}',
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "[from stdin]\n");
});

Deno.test("usage errors exit 2 with one line; --version and --help work from any directory", async () => {
  await using dir = await tempDir();
  const noName = await magi(["call"], { cwd: dir.path });
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /^magi: magi call needs a tool name/);
  const badFlag = await magi(["tools", "--bogus"], { cwd: dir.path });
  assert.equal(badFlag.code, 2);
  const unknown = await magi(["frobnicate"], { cwd: dir.path });
  assert.equal(unknown.code, 2);
  const version = await magi(["--version"], { cwd: dir.path });
  assert.match(version.stdout, /^magi \d+\.\d+\.\d+\n$/);
  const help = await magi(["--help"], { cwd: dir.path });
  assert.match(help.stdout, /magi call NAME \[JSON\|-\]/);
});

Deno.test("magi tools prints a readable table", async () => {
  const run = await magi(["tools", "--tools-dir", TOOLS]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^wc-lines +shipped +wc-lines — сколько строк в файле\.$/m);
  assert.match(run.stdout, /^typed-echo +tools_dir +typed-echo — print each argument/m);
});

Deno.test("magi check runs each selftest.sh and fails when one fails", async () => {
  await using dir = await tempDir();
  const good = join(dir.path, "good");
  await Deno.mkdir(good);
  await Deno.writeTextFile(join(good, "good"), "#!/bin/sh\n# good — a tool.\n# good\necho good\n", {
    mode: 0o755,
  });
  await Deno.writeTextFile(join(good, "selftest.sh"), 'out=$(./good) && [ "$out" = good ]\n');
  const bad = join(dir.path, "bad");
  await Deno.mkdir(bad);
  await Deno.writeTextFile(join(bad, "bad"), "#!/bin/sh\n# bad — a tool.\n# bad\necho bad\n", {
    mode: 0o755,
  });
  await Deno.writeTextFile(join(bad, "selftest.sh"), "echo 'expected good, got bad'; exit 1\n");
  const cfg = join(dir.path, "c.jsonc");
  await Deno.writeTextFile(cfg, '{"shipped_tools": false}');
  const run = await magi(["check", "--tools-dir", dir.path, "--config", cfg]);
  assert.equal(run.code, 1);
  assert.match(run.stdout, /^ok {4}good$/m);
  assert.match(run.stdout, /^FAIL {2}bad: exit status 1\n {6}expected good, got bad$/m);
  assert.match(run.stdout, /^1 passed, 1 failed$/m);
});

Deno.test("the shipped tools pass their own selftests", async () => {
  const run = await magi(["check"]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^ok {4}wc-lines$/m);
});

Deno.test("a credential shorter than 6 bytes is named once on stderr and not masked", async () => {
  const run = await magi(["tools", "--json"], { env: { SHORT_TOKEN: "abc" } });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stderr.split("\n").filter((l) => l.includes("SHORT_TOKEN"));
  assert.deepEqual(lines, ["magi: secret $SHORT_TOKEN is shorter than 6 bytes and is not masked"]);
});

Deno.test("magi ended by SIGTERM mid-call removes the unmasked $MAGI_SHOWN file and the tool", async () => {
  await using dir = await tempDir();
  const report = join(dir.path, "shown-path");
  const child = magiCommand(
    ["call", "shown-then-sleep", JSON.stringify({ args: [report] }), "--tools-dir", TOOLS],
    {
      // The report's folder is the start folder, a root (the system temp folder is none).
      cwd: dir.path,
      env: {
        XDG_CACHE_HOME: join(dir.path, "cache"),
        XDG_STATE_HOME: join(dir.path, "state"),
        MY_SECRET_TOKEN: "tok_Abc123XyZ987qwertyUIOP555",
      },
    },
  ).spawn();
  let shownPath = "";
  for (let i = 0; i < 200 && shownPath === ""; i++) {
    await new Promise((r) => setTimeout(r, 50));
    shownPath = await Deno.readTextFile(report).then((t) => t.trim()).catch(() => "");
  }
  assert.ok(shownPath, "the tool started");
  child.kill("SIGTERM");
  await child.status;
  await assert.rejects(() => Deno.stat(shownPath), Deno.errors.NotFound);
  const ps = new TextDecoder().decode(
    new Deno.Command("ps", { args: ["-eo", "args"] }).outputSync().stdout,
  );
  assert.ok(!ps.includes("sleep 307"), "the tool was ended");
});

Deno.test("options may come before the command; stray words are usage errors", async () => {
  const before = await magi(["--tools-dir", TOOLS, "call", "generic-args", '{"args":["a"]}']);
  assert.equal(before.code, 0, before.stderr);
  assert.equal(before.stdout, "[a]\n");
  const stray = await magi(["tools", "extra"]);
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /^magi: magi tools takes no words; got "extra"$/m);
});
