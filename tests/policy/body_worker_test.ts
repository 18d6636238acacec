/**
 * Deno's permissions behind the policy: in-process builtin bodies in a Worker
 * whose permissions come from the policy. Deno refuses what the policy does not allow.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bodyPermissions, runBody } from "../../lib/sources/builtins/body_worker.ts";
import { allowedPrograms } from "../../lib/policy/decide.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const LEAKY = new URL("../testdata/policy/bodies/leaky.ts", import.meta.url);

async function setup(dir: string) {
  const root = join(dir, "project");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "inside.txt"), "inside\n");
  await Deno.writeTextFile(join(dir, "outside.txt"), "outside\n");
  return await testRuntime({ cwd: root, config: { shipped_tools: false, roots: [root] } });
}

Deno.test("the policy's allowed programs are real paths found outside the roots", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const programs = allowedPrograms(t.rt.policy);
  assert.ok(programs.some((p) => p.endsWith("/ls")), programs.join(" "));
  assert.ok(!programs.some((p) => p.endsWith("/rm") || p.endsWith("/bash")));
  // Each by its real path, and also where PATH finds it (a symlink, for a multi-call binary).
  for (const p of programs) assert.ok(programs.includes(Deno.realPathSync(p)), p);
});

Deno.test("a builtin in a policy Worker: a read outside the roots and an unlisted program are refused by Deno", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  const permissions = bodyPermissions(t.rt.policy, { read: [fileURLToPath(LEAKY)] });
  const run = (args: Record<string, unknown>) =>
    runBody({
      kind: "builtin",
      module: LEAKY.href,
      export: "leaky",
      args,
      ctx: { cwd: root, env: {}, timeoutMs: 10_000, roots: [root] },
    }, { permissions, timeoutMs: 10_000, said: () => Promise.resolve() });
  const inside = await run({ path: join(root, "inside.txt") });
  assert.deepEqual([inside.isError, inside.said], [undefined, "inside\n"]);
  const outside = await run({ path: join(dir.path, "outside.txt") });
  assert.equal(outside.isError, true);
  assert.match(
    outside.note!,
    /Deno refused it .*NotCapable: Requires read access to ".*outside\.txt"\]$/,
  );
  // Deno's advice to a person at a shell is left out: the policy decides, not a flag.
  assert.ok(!outside.note!.includes("--allow-read"), outside.note);
  const program = await run({ program: "id" });
  assert.equal(program.isError, true);
  assert.match(program.note!, /NotCapable: Requires run access to "id"/);
  const allowed = await run({ program: "whoami" });
  assert.equal(allowed.isError, undefined, allowed.note);
  // Known holes: a PATH entry shadowing an allowed name, and a symlink named like one.
  await Deno.mkdir(join(root, "bin"));
  await Deno.writeTextFile(join(root, "bin", "whoami"), "#!/bin/sh\necho shadow\n", {
    mode: 0o755,
  });
  await Deno.symlink(Deno.realPathSync("/bin/rm"), join(root, "bin", "ls"));
  const shadowed = await run({
    program: "whoami",
    pathEnv: `${join(root, "bin")}:${Deno.env.get("PATH")}`,
  });
  assert.equal(shadowed.isError, true, String(shadowed.said));
  assert.match(shadowed.note!, /NotCapable: Requires run access to "whoami"/);
  const symlink = await run({ program: join(root, "bin", "ls") });
  assert.equal(symlink.isError, true, String(symlink.said));
  assert.match(symlink.note!, /NotCapable: Requires run access/);
});

Deno.test("no code relies on spawnSync (it fails silently when Deno denies it)", async () => {
  for (const dir of ["lib"]) {
    for await (const file of walk(new URL(`../../${dir}/`, import.meta.url))) {
      assert.ok(!(await Deno.readTextFile(file)).includes("spawnSync"), file);
    }
  }
});

async function* walk(url: URL): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(url)) {
    const child = new URL(entry.name + (entry.isDirectory ? "/" : ""), url);
    if (entry.isDirectory) yield* walk(child);
    else if (entry.name.endsWith(".ts")) yield fileURLToPath(child);
  }
}
