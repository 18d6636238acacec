/**
 * bash's `cd -` goes to $OLDPWD and `cd NAME` tries $CDPATH first: both come from the
 * environment `run` inherits (a person's shell exports OLDPWD), so such a line cannot be
 * judged from its words and is asked about, not allowed with a path outside the roots.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

Deno.test("cd - and cd through CDPATH are asked about", async () => {
  await using dir = await tempDir();
  const base = await Deno.realPath(dir.path);
  const root = join(base, "project");
  const away = join(base, "away");
  await Deno.mkdir(join(root, "away"), { recursive: true });
  await Deno.mkdir(away);
  await Deno.writeTextFile(join(away, "secret"), "hunter2\n");
  await Deno.writeTextFile(join(root, "away", "secret"), "inside\n");
  for (const env of [{ OLDPWD: away }, { CDPATH: base }] as Record<string, string>[]) {
    await using t = await testRuntime({
      cwd: root,
      env,
      config: { shipped_tools: false, roots: [root] },
    });
    const command = env.OLDPWD ? "cd - && cat secret" : "cd away && cat secret";
    const r = await runTool(t.rt, { name: "run", args: { command } });
    assert.equal(r.is_error, true, `${command}: ${r.said}`);
    assert.ok(!r.said.includes("hunter2"), r.said);
  }
  // Without CDPATH, `cd away` is the folder inside.
  await using t = await testRuntime({ cwd: root, config: { shipped_tools: false, roots: [root] } });
  const inside = await runTool(t.rt, { name: "run", args: { command: "cd away && cat secret" } });
  assert.equal(inside.said, "inside\n", inside.said);
});
