/**
 * The judge decides once per distinct call and keeps the verdict with the facts it was
 * decided over (`judge` in facts.ts): a later call alike gets it only while every fact still
 * holds. A symlink swapped, a program put earlier on PATH, a file made executable: the next
 * call is decided anew and its verdict is what a fresh decision gives. Real files, a real
 * PATH; the folders are made here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { type CallFacts, decide, loadPolicy } from "../../lib/policy/decide.ts";
import { gatherFacts, judge } from "../../lib/policy/facts.ts";
import { fromFacts } from "../../lib/policy/fs_facts.ts";

async function world() {
  const dir = await tempDir();
  const base = await Deno.realPath(dir.path);
  const root = join(base, "project");
  const outside = join(base, "outside");
  await Deno.mkdir(join(root, "inside"), { recursive: true });
  await Deno.mkdir(join(root, "bin"));
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "x");
  await Deno.writeTextFile(join(root, "inside", "secret.txt"), "y");
  await Deno.symlink(join(root, "inside"), join(root, "link"));
  const path = `${join(root, "bin")}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
  const env = { HOME: join(base, "home"), PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const policy = loadPolicy(undefined, "test", [root], env);
  const run = (command: string): CallFacts => ({
    tool: "run",
    source: "builtin",
    args: { command },
    cwd: root,
    path,
  });
  /** The kept verdict, checked against a decision made afresh. */
  const both = (call: CallFacts) => {
    const kept = judge(policy, call);
    assert.deepEqual(kept, decide(policy, call, fromFacts(gatherFacts(policy, call))));
    return kept.decision;
  };
  return { dir, root, outside, policy, run, both };
}

Deno.test("a kept verdict follows a symlink swapped between two calls alike", async () => {
  const w = await world();
  await using _ = w.dir;
  const call = w.run("cat link/secret.txt");
  const inside = w.both(call);
  assert.equal(w.both(call), inside);
  await Deno.remove(join(w.root, "link"));
  await Deno.symlink(w.outside, join(w.root, "link"));
  const out = w.both(call);
  assert.notEqual(out, inside, "the link now leads outside the roots");
  assert.equal(w.both(call), out);
  await Deno.remove(join(w.root, "link"));
  await Deno.symlink(join(w.root, "inside"), join(w.root, "link"));
  assert.equal(w.both(call), inside);
  // A read builtin's path, too.
  const read: CallFacts = {
    tool: "read",
    source: "builtin",
    args: { path: "link/secret.txt" },
    cwd: w.root,
  };
  const readIn = w.both(read);
  await Deno.remove(join(w.root, "link"));
  await Deno.symlink(w.outside, join(w.root, "link"));
  assert.notEqual(w.both(read), readIn);
});

Deno.test("a kept verdict follows a program put earlier on PATH, and made executable", async () => {
  const w = await world();
  await using _ = w.dir;
  const call = w.run("ls");
  const system = w.both(call);
  assert.equal(system, "allow");
  const planted = join(w.root, "bin", "ls");
  await Deno.writeTextFile(planted, "#!/bin/sh\necho planted\n", { mode: 0o644 });
  assert.equal(w.both(call), system, "not executable: PATH passes it over");
  await Deno.chmod(planted, 0o755);
  const found = w.both(call);
  assert.notEqual(found, system, "the project's own ls is found first now");
  await Deno.remove(planted);
  assert.equal(w.both(call), system);
});

Deno.test("calls that differ in any part are decided apart; a new policy starts afresh", async () => {
  const w = await world();
  await using _ = w.dir;
  const a = w.run("cat inside/secret.txt");
  assert.equal(w.both(a), "allow");
  assert.equal(w.both({ ...a, cwd: w.outside, args: { command: "cat secret.txt" } }), "deny");
  assert.equal(w.both({ ...a, args: { command: `cat ${w.outside}/secret.txt` } }), "deny");
  // The same call under a policy that denies it.
  const strict = loadPolicy(
    { rules: [{ id: "no-cat", tool: "run", command: "cat *", decision: "deny" as const }] },
    "test",
    [w.root],
    { HOME: "/nonexistent", PATH: "/usr/bin:/bin" },
  );
  assert.equal(judge(strict, a).decision, "deny");
  assert.equal(w.both(a), "allow");
});
