/**
 * magi's own file builtins (not a fixture) run in the policy's Worker: the runtime wires them
 * there, and when their own roots check fails, Deno refuses what the policy refuses.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { confinedBody } from "../../lib/sources/builtins/body_worker.ts";
import { tempDir, testRuntime } from "../helpers.ts";

async function setup(dir: string) {
  const root = join(dir, "project");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "inside.txt"), "inside\n");
  await Deno.writeTextFile(join(dir, "outside.txt"), "outside\n");
  return await testRuntime({ cwd: root, config: { shipped_tools: false, roots: [root] } });
}

Deno.test("the runtime's read runs in a Worker, not in magi's own isolate", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  // A Deno.open that fails in magi's own isolate: a body run in-process would meet it.
  const open = Deno.open;
  Deno.open = ((path: string | URL, options?: Deno.OpenOptions) => {
    if (String(path).endsWith("inside.txt")) throw new Error("opened in magi's own isolate");
    return open(path, options);
  }) as typeof Deno.open;
  try {
    const r = await runTool(t.rt, { name: "read", args: { path: "inside.txt" }, caller: "model" });
    assert.equal(r.is_error, false, r.said);
    assert.match(r.said, /inside/);
  } finally {
    Deno.open = open;
  }
});

Deno.test("read and write whose own roots check fails still meet Deno's refusal", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  // A bug in the builtins' own check: they are told every path is inside the roots.
  const ctx = {
    cwd: root,
    env: {},
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    roots: ["/"],
    said: () => Promise.resolve(),
  };
  const read = confinedBody(() => t.rt.policy, { name: "read" })!;
  const inside = await read({ path: join(root, "inside.txt") }, ctx);
  assert.equal(inside.isError, undefined, inside.note);
  const outside = await read({ path: join(dir.path, "outside.txt") }, ctx);
  // read reports the refusal itself (its catch sees Deno's NotCapable message).
  assert.equal(outside.isError, true);
  assert.match(`${outside.said}${outside.note}`, /Requires read access to ".*outside\.txt"/);
  assert.ok(!String(outside.said).includes("outside\n"));
  const write = confinedBody(() => t.rt.policy, { name: "write" })!;
  const wrote = await write({ path: join(dir.path, "pwned.txt"), content: "x" }, ctx);
  assert.equal(wrote.isError, true);
  assert.match(`${wrote.said}${wrote.note}`, /Requires (read|write) access to ".*pwned\.txt"/);
  await assert.rejects(Deno.stat(join(dir.path, "pwned.txt")));
});
