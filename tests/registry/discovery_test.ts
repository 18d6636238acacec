import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { magi, makeTool, tempDir, TESTDATA, testRuntime } from "../helpers.ts";

Deno.test("broken tools cost only themselves, each with one stderr line saying why", async () => {
  const run = await magi(["tools", "--json", "--tools-dir", join(TESTDATA, "bad-tools")]);
  assert.equal(run.code, 0, run.stderr);
  const names = JSON.parse(run.stdout).map((t: { name: string }) => t.name);
  for (const kept of ["huge-help", "bad-schema", "no-props", "no-mapping"]) {
    assert.ok(names.includes(kept), kept);
  }
  for (const gone of ["crash-help", "hang-help", "no-text", "not-exec", "bad.name"]) {
    assert.ok(!names.includes(gone), gone);
  }
  const lines = run.stderr.trim().split("\n");
  const about = (name: string) => lines.filter((l) => l.includes(`"${name}"`));
  assert.match(about("crash-help").join(), /skipped: --help crashed \(SIGSEGV\)/);
  assert.match(about("hang-help").join(), /skipped: --help did not finish within 5 s/);
  assert.match(about("no-text").join(), /skipped: --help printed no text/);
  assert.match(about("not-exec").join(), /skipped: .* is not an executable file/);
  assert.match(about("bad.name").join(), /refused: a name must match/);
  assert.match(about("bad-schema").join(), /schema.json is not JSON .*; the tool stays generic/);
  assert.match(about("no-props").join(), /no "properties"; the tool stays generic/);
  assert.match(about("no-mapping").join(), /has no x-magi mapping, .*; the tool stays generic/);
  for (
    const name of [
      "crash-help",
      "hang-help",
      "no-text",
      "not-exec",
      "bad.name",
      "bad-schema",
      "no-props",
    ]
  ) {
    assert.equal(about(name).length, 1, `${name}: ${about(name)}`);
  }
  const huge = JSON.parse(run.stdout).find((t: { name: string }) => t.name === "huge-help");
  assert.equal(
    huge.description,
    "Print a huge help text (1 MB) after its two contract lines.\nhuge-help [ARG]...",
  );
  const generic = JSON.parse(run.stdout).find((t: { name: string }) => t.name === "no-props");
  assert.deepEqual(Object.keys(generic.parameters.properties), ["args", "stdin"]);
});

Deno.test("name collisions: the first source keeps the name, one stderr line names both", async () => {
  await using t = await testRuntime({
    toolsDirs: [join(TESTDATA, "collide-a"), join(TESTDATA, "collide-b")],
  });
  const dup = await runTool(t.rt, { name: "dup", args: {} });
  assert.equal(dup.said, "dup from a\n");
  const read = t.rt.registry.get("read")!;
  assert.equal(read.origin.source, "builtin");
  const dupLines = t.warnings.filter((w) => w.includes('"dup"'));
  assert.equal(dupLines.length, 1);
  assert.match(dupLines[0], /collide-b\/dup left out: tools_dir .*collide-a\/dup has that name/);
  assert.equal(t.warnings.filter((w) => w.includes('"read"')).length, 1);
  assert.match(
    t.warnings.find((w) => w.includes('"read"'))!,
    /left out: builtin magi:read has that name/,
  );
});

Deno.test("a warm start spawns no --help; a changed tool is visited again", async () => {
  await using dir = await tempDir();
  const counter = join(dir.path, "visits");
  const script = (summary: string) =>
    `#!/bin/sh\nif [ "$1" = --help ]; then echo visit >> ${counter}; echo "${summary}"; echo "counted"; fi\n`;
  await makeTool(join(dir.path, "tools"), "counted", script("Count my visits."));
  const home = join(dir.path, "home");
  const list = () => magi(["tools", "--json", "--tools-dir", join(dir.path, "tools")], { home });
  const visits = async () => (await Deno.readTextFile(counter)).trim().split("\n").length;
  await list();
  await list();
  assert.equal(await visits(), 1);
  await makeTool(join(dir.path, "tools"), "counted", script("Count my visits, changed."));
  const third = await list();
  assert.equal(await visits(), 2);
  assert.match(third.stdout, /Count my visits, changed\./);
});

Deno.test("the seed's wc-lines: its --help fails, so its header comments describe it", async () => {
  // A first start: the line comes with the visit, not from the cache.
  await using t = await testRuntime({ fresh: true });
  const wc = t.rt.registry.get("wc-lines")!;
  assert.equal(
    wc.declaration.description,
    "wc-lines — сколько строк в файле.\nwc-lines <путь> [--no-empty]",
  );
  // A shipped tool is magi's own: its header comments are no news to the person.
  assert.ok(!t.warnings.some((w) => w.includes('"wc-lines"')), t.warnings.join("\n"));
});

Deno.test("a script whose --help prints nothing is described by its header comments, saying so", async () => {
  await using dir = await tempDir();
  const tool = join(dir.path, "tools", "quiet");
  await Deno.mkdir(tool, { recursive: true });
  await Deno.writeTextFile(
    join(tool, "quiet"),
    '#!/bin/sh\n# quiet — prints the date.\n# quiet [FORMAT]\n[ "$1" = --help ] && exit 0\ndate\n',
    { mode: 0o755 },
  );
  await using t = await testRuntime({ toolsDirs: [join(dir.path, "tools")], fresh: true });
  assert.equal(
    t.rt.registry.get("quiet")?.declaration.description,
    "quiet — prints the date.\nquiet [FORMAT]",
  );
  assert.ok(t.warnings.some((w) => /"quiet": --help gave no summary and usage line/.test(w)));
});

Deno.test("a secret in a tool's --help is masked in its declaration and in the cache", async () => {
  const token = "tok_Abc123XyZ987qwertyUIOP555";
  await using t = await testRuntime({
    toolsDirs: [join(TESTDATA, "tools")],
    env: { MY_SECRET_TOKEN: token },
  });
  const decl = t.rt.registry.get("secret-help")!.declaration;
  assert.equal(
    decl.description,
    "Call the API (default token: $MY_SECRET_TOKEN).\nsecret-help [ARG]...",
  );
  const cache = await Deno.readTextFile(join(t.home, "cache", "magi", "discovery.json"));
  assert.ok(!cache.includes(token));
});

Deno.test("the same folder given twice is read once, without collisions", async () => {
  const tools = join(TESTDATA, "tools");
  await using t = await testRuntime({ toolsDirs: [tools, tools + "/"] });
  assert.deepEqual(t.warnings.filter((w) => w.includes("left out")), []);
});

Deno.test("a --help that timed out is remembered until the tool's file changes", async () => {
  await using dir = await tempDir();
  const counter = join(dir.path, "visits");
  const body = (sleep: string) =>
    `#!/bin/sh\nif [ "$1" = --help ]; then echo visit >> ${counter}; ${sleep}` +
    `echo "Slow once."; echo "slow-once"; fi\n`;
  await makeTool(join(dir.path, "tools"), "slow-once", body("sleep 6; "));
  const home = join(dir.path, "home");
  const list = () => magi(["tools", "--json", "--tools-dir", join(dir.path, "tools")], { home });
  const first = await list();
  assert.match(first.stderr, /"slow-once" skipped: --help did not finish within 5 s/);
  const second = await list();
  assert.match(second.stderr, /"slow-once" skipped: .*remembered until the file changes/);
  assert.equal((await Deno.readTextFile(counter)).trim().split("\n").length, 1, "not run again");
  await Deno.writeTextFile(join(dir.path, "tools", "slow-once", "slow-once"), body(""));
  const third = await list();
  assert.ok(
    JSON.parse(third.stdout).some((t: { name: string }) => t.name === "slow-once"),
    third.stderr,
  );
  assert.equal((await Deno.readTextFile(counter)).trim().split("\n").length, 2);
});
