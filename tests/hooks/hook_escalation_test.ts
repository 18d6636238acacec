/**
 * A before_tool hook's "allow" answers the policy's ask about its own call, never a running
 * tool's escalation on the approvals socket — neither its own call's nor another's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const TOOLS = join(TESTDATA, "policy", "tools");
const APPROVE_ME = join(TOOLS, "approve-me", "approve-me");

/** A runtime whose person's config allows every `run` by a hook. */
async function hooked(dir: string) {
  return await testRuntime({
    cwd: dir,
    toolsDirs: [TOOLS],
    config: {
      shipped_tools: false,
      sandbox: { mode: "off" },
      hooks: { before_tool: [{ matcher: "run", command: `echo '{"decision":"allow"}'` }] },
    },
  });
}

/** A script (in the roots) that asks the approvals socket "Force-push to deploy?". */
async function askScript(dir: string): Promise<string> {
  const ask = join(dir, "ask.sh");
  await Deno.writeTextFile(
    ask,
    `exec '${Deno.execPath()}' run --quiet -A '${APPROVE_ME}' Force-push to deploy?\n`,
  );
  return ask;
}

/** Waits (up to 30 s) until `path` exists: the event a call signals it has started. */
async function exists(path: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      await Deno.stat(path);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${path} never appeared`);
}

Deno.test({
  name: "a hook's allow runs the call but does not approve the escalation the call asks for",
  fn: async () => {
    await using dir = await tempDir();
    await using t = await hooked(dir.path);
    const ask = await askScript(dir.path);
    const r = await runTool(t.rt, { name: "run", args: { command: `sh ${ask}` }, caller: "model" });
    assert.equal(r.is_error, false, r.said);
    assert.match(r.said, /^refused: no person to ask \(non-interactive\)/);
  },
});

Deno.test({
  name: "a hook's allow lent to one running call approves no other call's escalation",
  fn: async () => {
    await using dir = await tempDir();
    await using t = await hooked(dir.path);
    const started = join(dir.path, "started");
    const done = join(dir.path, "done");
    // A `run` the hook allows, running until the test is done with the other call.
    const waiting = runTool(t.rt, {
      name: "run",
      args: { command: `touch ${started}; while [ ! -e ${done} ]; do sleep 0.05; done` },
      caller: "model",
    });
    try {
      await exists(started);
      const r = await runTool(t.rt, {
        name: "approve-me",
        args: { args: ["Force-push", "to", "deploy?"] },
        caller: "model",
      });
      assert.equal(r.is_error, false, r.said);
      assert.match(r.said, /^refused: no person to ask \(non-interactive\)/);
    } finally {
      await Deno.writeTextFile(done, "");
    }
    assert.equal((await waiting).is_error, false);
  },
});

Deno.test("under a hook's allow, the call's escalation goes to its person, marked as one", async () => {
  await using dir = await tempDir();
  await using t = await hooked(dir.path);
  const asked: { tool: string; escalation?: boolean }[] = [];
  const r = await runTool(t.rt, {
    name: "run",
    args: { command: `sh ${await askScript(dir.path)}` },
    caller: "model",
    approve: (request) => {
      asked.push({ tool: request.tool, escalation: request.escalation });
      return Promise.resolve("no");
    },
  });
  assert.equal(r.said.trim(), "refused: refused by the person");
  // The hook answered the policy's ask about the run itself; only the escalation reached her.
  assert.deepEqual(asked, [{ tool: "run", escalation: true }]);
});
