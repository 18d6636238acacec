/**
 * `/proc/self/cwd` in a `run` line is the folder of the process that opens it — the line's
 * folder — not magi's own: judged from magi's, `cat /proc/self/cwd/../secret` with magi one
 * folder deeper than the line read a file outside the roots.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

Deno.test("/proc/self/cwd is the line's folder, not magi's", async () => {
  await using dir = await tempDir();
  const base = await Deno.realPath(dir.path);
  const root = join(base, "project");
  await Deno.mkdir(join(root, "sub"), { recursive: true });
  await Deno.writeTextFile(join(base, "secret"), "hunter2\n");
  await Deno.writeTextFile(join(root, "secret"), "inside\n");
  await using t = await testRuntime({ cwd: root, config: { shipped_tools: false, roots: [root] } });
  const was = Deno.cwd();
  Deno.chdir(join(root, "sub"));
  try {
    const out = await runTool(t.rt, {
      name: "run",
      args: { command: "cat /proc/self/cwd/../secret", cwd: root },
    });
    assert.equal(out.is_error, true, out.said);
    assert.ok(!out.said.includes("hunter2"), out.said);
    const inside = await runTool(t.rt, {
      name: "run",
      args: { command: "cat /proc/self/cwd/secret", cwd: root },
    });
    assert.equal(inside.said, "inside\n", inside.said);
  } finally {
    Deno.chdir(was);
  }
});
