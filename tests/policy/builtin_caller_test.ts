/**
 * `magi builtin`'s caller (SPEC S8.1): the caller of the call whose program runs it, carried
 * in `MAGI_CALLER`. A model's tool that goes through `magi builtin` makes a model's call
 * there — an ask is refused with no one to answer, in the sandbox too — while the person's
 * own `magi call` of the same tool is the person's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";
import { callerOf } from "../../lib/policy/caller.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";

const why = await sandboxProblem();

Deno.test("callerOf: MAGI_CALLER names the caller; a tool's environment without it is a model", () => {
  const table: [Record<string, string>, string][] = [
    [{}, "person"],
    [{ MAGI_CALLER: "person" }, "person"],
    [{ MAGI_CALLER: "model" }, "model"],
    [{ MAGI_CALLER: "mcp" }, "mcp"],
    [{ MAGI_CALLER: "root" }, "model"],
    [{ MAGI_CWD: "/w" }, "model"],
    [{ MAGI_CWD: "/w", MAGI_CALLER: "" }, "model"],
  ];
  for (const [env, want] of table) assert.equal(callerOf(env), want, JSON.stringify(env));
});

for (const mode of ["off", "workspace-write"] as const) {
  Deno.test({
    name: `magi builtin from a tool makes its caller's call (sandbox ${mode})`,
    ignore: mode !== "off" && why !== undefined,
    fn: async () => {
      await using dir = await tempDir();
      const root = join(dir.path, "root");
      const tools = join(dir.path, "tools");
      await Deno.mkdir(root);
      await makeTool(
        tools,
        "maker",
        '#!/bin/sh\n[ "$1" = "--help" ] && { echo "Makes a file through magi builtin"; ' +
          'echo "Usage: maker NAME"; exit 0; }\n' +
          'magi builtin run "touch $1" 2>&1\necho "exit=$?"\n',
      );
      await using t = await testRuntime({
        cwd: root,
        toolsDirs: [tools],
        config: {
          shipped_tools: false,
          roots: [root],
          sandbox: { mode },
          // The person's own rule: the tool runs (in workspace-write), so `touch` could write.
          policy: { rules: [{ tool: "maker", decision: "allow" }] },
        },
      });
      const made = (name: string) => Deno.lstat(join(root, name)).then(() => true, () => false);
      const model = await runTool(t.rt, {
        name: "maker",
        args: { args: ["by-model"], timeout_seconds: 120 },
        caller: "model",
      });
      assert.match(model.said, /exit=1/, model.said);
      assert.match(model.said, /denied \(no person to approve it/, model.said);
      assert.equal(await made("by-model"), false);
      // (Inside the sandbox a nested one cannot start, so the person's `run` is checked off.)
      if (mode !== "off") return;
      const person = await runTool(t.rt, {
        name: "maker",
        args: { args: ["by-person"], timeout_seconds: 120 },
        caller: "person",
      });
      assert.match(person.said, /exit=0/, person.said);
      assert.equal(await made("by-person"), true);
    },
  });
}
