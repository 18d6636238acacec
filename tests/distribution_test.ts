/**
 * Distribution (issue 8, SPEC S10.2): the permission set, `main.ts` run under it from another
 * folder, the shipped tools copied out of an embedded file system, `deno task install`, and
 * `deno task compile` — whose smoke test runs only when a `denort` can be had.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { MAGI_TASK, RUN_FLAGS } from "../scripts/permissions.ts";
import { EXIT_NO_DENORT, findDenort } from "../scripts/compile.ts";
import { smokeTest } from "../scripts/smoke.ts";
import { realCopy } from "../lib/exec/shipped.ts";
import { DENO_DIR, REPO, tempDir } from "./helpers.ts";

const DENO = Deno.realPathSync(Deno.execPath());

async function run(cmd: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the tasks spell the permission set of scripts/permissions.ts, never -A", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).tasks;
  assert.equal(tasks.magi, MAGI_TASK);
  assert.ok(!RUN_FLAGS.includes("-A") && !RUN_FLAGS.includes("--allow-all"));
  assert.ok(RUN_FLAGS.includes("--no-prompt"));
});

Deno.test("main.ts under the permission set, from another folder with no deno on PATH, passes the smoke test", async () => {
  await using dir = await tempDir();
  const wrapper = join(dir.path, "magi");
  await Deno.writeTextFile(
    wrapper,
    `#!/bin/sh\nDENO_DIR='${DENO_DIR}' exec '${DENO}' run ${RUN_FLAGS.join(" ")} --quiet ` +
      `--config '${join(REPO, "deno.json")}' '${join(REPO, "main.ts")}' "$@"\n`,
    { mode: 0o755 },
  );
  assert.deepEqual(await smokeTest(wrapper), []);
});

Deno.test("realCopy makes a real, executable copy of the shipped tools once", async () => {
  await using dir = await tempDir();
  const into = join(dir.path, "copies");
  const copy = realCopy(join(REPO, "tools"), "tools", into);
  assert.equal(copy, join(into, "tools"));
  const wc = Deno.statSync(join(copy, "wc-lines", "wc-lines"));
  assert.ok(((wc.mode ?? 0) & 0o111) !== 0, "wc-lines is executable");
  assert.equal(
    Deno.readTextFileSync(join(copy, "todo.lua")),
    Deno.readTextFileSync(join(REPO, "tools", "todo.lua")),
  );
  const readme = Deno.statSync(join(copy, "README.md"));
  assert.equal((readme.mode ?? 0) & 0o111, 0, "README.md is not executable");
  Deno.removeSync(join(copy, "todo.lua"));
  assert.equal(realCopy(join(REPO, "tools"), "tools", into), copy);
  assert.throws(() => Deno.statSync(join(copy, "todo.lua")), "an existing copy is reused");
});

Deno.test("deno task install puts a working magi command in the root it is given", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "root");
  const installed = await run(DENO, [
    "run",
    "-A",
    join(REPO, "scripts/install.ts"),
    "--root",
    root,
  ]);
  assert.equal(installed.code, 0, installed.stderr);
  const bin = join(root, "bin", "magi");
  assert.ok(installed.stdout.includes(`installed ${bin}\n`), installed.stdout);
  assert.ok(installed.stdout.includes(`${join(root, "bin")} is not on PATH`), installed.stdout);
  const script = Deno.readTextFileSync(bin);
  for (const flag of RUN_FLAGS) assert.ok(script.includes(flag), `${flag} in ${script}`);
  assert.ok(!/ -A /.test(script));
  const version = await run(bin, ["--version"], { DENO_DIR });
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^magi \d+\.\d+\.\d+/);
});

Deno.test("deno task compile refuses the deno binary as DENORT_BIN", async () => {
  await using dir = await tempDir();
  const fake = join(dir.path, "denort");
  await Deno.writeTextFile(fake, "#!/bin/sh\necho 'deno 2.9.6 (stable)'\n", { mode: 0o755 });
  for (const [bin, reason] of [[DENO, /deno binary itself/], [fake, /like deno/]] as const) {
    const out = await run(DENO, ["run", "-A", join(REPO, "scripts/compile.ts")], {
      DENORT_BIN: bin,
      DENO_DIR: join(dir.path, "deno-dir"),
    });
    assert.equal(out.code, EXIT_NO_DENORT, out.stdout + out.stderr);
    const lines = out.stdout.trim().split("\n");
    assert.equal(lines.length, 1, out.stdout);
    assert.match(lines[0], /^compile skipped: /);
    assert.match(lines[0], reason);
  }
});

Deno.test("deno task compile with no denort says why in one line and exits 3", async () => {
  await using dir = await tempDir();
  const env = { ...Deno.env.toObject(), DENO_DIR: join(dir.path, "deno-dir") };
  delete (env as Record<string, string>).DENORT_BIN;
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", join(REPO, "scripts/compile.ts")],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, EXIT_NO_DENORT);
  assert.match(stdout, /^compile skipped: no denort for .*DENORT_BIN is not set.*\n$/);
});

const denort = await findDenort(Deno.build.target, Deno.env.toObject(), DENO_DIR);
if (denort.kind === "none") console.log(`compile smoke test skipped: ${denort.reason}`);

Deno.test({
  name: "deno task compile builds a binary that passes its smoke test",
  ignore: denort.kind === "none",
  fn: async () => {
    await using dir = await tempDir();
    const out = await run(DENO, [
      "run",
      "-A",
      join(REPO, "scripts/compile.ts"),
      "--output",
      dir.path,
    ], Deno.env.toObject());
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stdout, /smoke test passed/);
  },
});
