/**
 * One function decides (SPEC S8.1): the file-system facts a decision needs are gathered
 * first (`gatherFacts`), and `decide` over them is a pure function of the call, the facts and
 * the policy. Shown two ways: a Worker that may read only magi's own code gives the same verdicts from the
 * facts alone, and the facts still decide after the folders they describe are gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { type CallFacts, decide, loadPolicy } from "../../lib/policy/decide.ts";
import { gatherFacts, judge } from "../../lib/policy/facts.ts";
import { fromFacts, MissingFact, noFacts } from "../../lib/policy/fs_facts.ts";

const CHECKOUT = new URL("../../", import.meta.url).pathname;

async function world() {
  const dir = await tempDir();
  const root = join(dir.path, "project");
  const outside = join(dir.path, "outside");
  await Deno.mkdir(join(root, "bare.git", "objects"), { recursive: true });
  await Deno.mkdir(join(root, "bare.git", "refs"));
  await Deno.writeTextFile(join(root, "bare.git", "HEAD"), "ref: refs/heads/main\n");
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "x");
  await Deno.symlink(outside, join(root, "link"));
  const env = { HOME: join(dir.path, "home"), PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const policy = loadPolicy(undefined, "test", [root], env);
  const run = (command: string, cwd = root): CallFacts => ({
    tool: "run",
    source: "builtin",
    args: { command },
    cwd,
  });
  const calls: CallFacts[] = [
    run("ls -la"),
    run("cat link/secret.txt"),
    run("cat link/../outside/secret.txt"),
    run("git status", join(root, "bare.git")),
    run("cd link && ls"),
    { tool: "read", source: "builtin", args: { path: "link/secret.txt" }, cwd: root },
    { tool: "read", source: "builtin", args: { path: "README.md" }, cwd: root },
  ];
  return { dir, root, env, policy, calls };
}

Deno.test({
  name: "the decision over gathered facts does no I/O: a Worker that cannot read them agrees",
  sanitizeResources: false,
  fn: async () => {
    const w = await world();
    await using _ = w.dir;
    const gathered = w.calls.map((call) => ({ call, facts: gatherFacts(w.policy, call) }));
    const expected = w.calls.map((call) => judge(w.policy, call));
    assert.deepEqual(expected.map((v) => v.decision), [
      "allow",
      "deny",
      "deny",
      "ask",
      "deny",
      "deny",
      "allow",
    ]);
    const worker = new Worker(new URL("./pure_decision_worker.ts", import.meta.url), {
      type: "module",
      // Read access to magi's own checkout only (its npm modules load lazily); none to the
      // folders the calls are about, PATH's folders or anything else. (The shell parser's Go
      // runtime reads the environment when it starts.)
      // deno-lint-ignore no-explicit-any
      deno: { permissions: { read: [CHECKOUT], env: true, run: false, write: false } } as any,
    });
    try {
      const answer = await new Promise<{ verdicts?: unknown[]; error?: string }>(
        (resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("the Worker did not answer")), 20_000);
          worker.onmessage = (e) => {
            clearTimeout(timer);
            resolve(e.data);
          };
          worker.onerror = (e) => {
            clearTimeout(timer);
            reject(new Error(e.message));
          };
          worker.postMessage({ roots: [w.root], env: w.env, calls: gathered });
        },
      );
      assert.equal(answer.error, undefined);
      assert.deepEqual(answer.verdicts, expected);
    } finally {
      worker.terminate();
    }
  },
});

Deno.test("facts decide after the folders they describe are gone; a missing fact is named", async () => {
  const w = await world();
  const gathered = w.calls.map((call) => gatherFacts(w.policy, call));
  const before = w.calls.map((call) => judge(w.policy, call));
  await Deno.remove(w.dir.path, { recursive: true });
  const after = w.calls.map((call, i) => decide(w.policy, call, fromFacts(gathered[i])));
  assert.deepEqual(after, before);
  assert.throws(
    () => decide(w.policy, w.calls[1], fromFacts(noFacts())),
    (e: unknown) => e instanceof MissingFact && /not gathered: \w+\(/.test((e as Error).message),
  );
});
