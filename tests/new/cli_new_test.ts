import assert from "node:assert/strict";
import { NEW_OPTIONS } from "../../lib/cli/options.ts";
import { join } from "node:path";
import { magi, tempDir, TESTDATA, writeConfig } from "../helpers.ts";

Deno.test("magi new, then magi call, magi check and magi tools --json see the tool", async () => {
  await using dir = await tempDir();
  const home = join(dir.path, "home");
  const tools = join(dir.path, "tools");
  // A relative script path is made absolute: the call below runs from another folder.
  const made = await magi(
    ["new", "greet", "--from", "python3 programs/greet.py", "--tools-dir", tools],
    { home, cwd: join(TESTDATA, "new") },
  );
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /read the help of "python3 \/.*\/greet\.py --help" \(argparse style/);
  assert.match(made.stdout, /-n, --times → times \(integer\)/);
  assert.match(made.stdout, /discovery accepts it; try: magi check --tools-dir \S+/);
  assert.match(made.stdout, /is not a configured tools_dir/);

  const called = await magi(
    ["call", "greet", '{"name": "bob", "shout": true}', "--tools-dir", tools],
    { home },
  );
  assert.equal(called.code, 0, called.stderr);
  assert.equal(called.stdout, "HELLO, BOB\n");

  const checked = await magi(["check", "--tools-dir", tools], { home });
  assert.match(checked.stdout, /^ok {4}greet$/m);

  const listed = await magi(["tools", "--json", "--tools-dir", tools], { home });
  const greet = JSON.parse(listed.stdout).find((t: { name: string }) => t.name === "greet");
  assert.equal(
    greet.description,
    "Greet someone, a few times\nUsage: greet [-h] [-n N] [--shout] [--style {plain,fancy}] [-t TAG] name [extra ...]",
  );
  assert.deepEqual(greet.parameters.required, ["name"]);
  assert.ok(!JSON.stringify(greet).includes("x-magi"));

  const again = await magi(["new", "greet", "--from", "wc", "--tools-dir", tools], { home });
  assert.equal(again.code, 1);
  assert.match(
    again.stderr,
    /Tool "greet" already exists in "\S+" \(greet, schema\.json, selftest\.sh\); pass --force/,
  );
  const forced = await magi(["new", "greet", "--from", "wc", "--tools-dir", tools, "--force"], {
    home,
  });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(Deno.readTextFileSync(join(tools, "greet", "greet")), /exec '\S*wc' "\$@"/);
});

Deno.test("magi new --dry-run prints the files and writes nothing; --generic skips the schema", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  const gitLog = (flag: string) =>
    magi(["new", "git-log", "--from", "git log", "--tools-dir", tools, flag]);
  const dry = await gitLog("--dry-run");
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /dry run: nothing written/);
  assert.match(dry.stdout, /--- .*git-log\/schema\.json \(schema\)\n\{/);
  assert.match(dry.stdout, /exec '\S*git' 'log' "\$@"/);
  assert.throws(() => Deno.statSync(tools));

  const generic = await gitLog("--generic");
  assert.equal(generic.code, 0, generic.stderr);
  assert.match(generic.stdout, /generic tool \(parameters args and stdin\): --generic was given/);
  assert.throws(() => Deno.statSync(join(tools, "git-log", "schema.json")));
  assert.ok(Deno.statSync(join(tools, "git-log", "selftest.sh")).isFile);
});

Deno.test("magi new takes the tools folder from the config, and says so when there is none", async () => {
  await using dir = await tempDir();
  const none = await magi(["new", "count", "--from", "wc"], { cwd: dir.path });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /needs a tools folder: pass --tools-dir DIR or set tools_dir/);
  const config = await writeConfig(dir.path, { tools_dir: ["mine"] });
  const made = await magi(["new", "count", "--from", "wc", "--config", config], { cwd: dir.path });
  assert.equal(made.code, 0, made.stderr);
  assert.ok(Deno.statSync(join(dir.path, "mine", "count", "count")).isFile);
  assert.match(made.stdout, /discovery accepts it; try: magi check, magi tools --json\n/);
  assert.doesNotMatch(made.stdout, /not a configured tools_dir/);
  const missing = await magi(["new", "x", "--from", "no-such-program-here", "--config", config]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot find the program "no-such-program-here"/);
});

Deno.test("magi new --only and --max-params choose the typed options; bad values are usage errors", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  const base = ["new", "tar", "--from", "tar", "--tools-dir", tools, "--dry-run"];
  const only = await magi([...base, "--only=-c,-x", "--only", "file"]);
  assert.equal(only.code, 0, only.stderr);
  assert.match(only.stdout, /^typed parameters \(4\), plus args and stdin:$/m);
  assert.match(
    only.stdout,
    /^typed what --only asked \(\d+ bytes of parameters\); the other \d+ options go in args$/m,
  );
  const wrong = await magi([...base, "--only", "c,--no-such-option"]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--only names "--no-such-option", which the help text does not list/);
  const empty = await magi([...base, "--only", ",,"]);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /--only needs option names/);
  const bad = await magi([...base, "--max-params", "many"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--max-params needs a whole number, not "many"/);
});

Deno.test("magi new --help lists every option, with examples", async () => {
  const r = await magi(["new", "--help"]);
  assert.equal(r.code, 0);
  // The parser's own table: what --help lists is what `magi new` accepts.
  const declared = Object.keys(NEW_OPTIONS);
  assert.ok(declared.length >= 6, declared.join());
  for (const option of [...declared, "tools-dir", "config"]) {
    assert.match(r.stdout, new RegExp(`^  --${option}\\b`, "m"), `--${option} is listed`);
  }
  assert.match(r.stdout, /^Examples:\n( {2}magi new .*\n {6}.*\n)+/m);
});
