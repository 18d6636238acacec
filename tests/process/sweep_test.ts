/**
 * Nothing left behind: a descendant that left its process group (`setsid`) is found by the
 * tag in its environment and ended once its tool has ended.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sweepNow } from "../../lib/exec/sweep.ts";
import { magi, makeTool, tempDir, testRuntime } from "../helpers.ts";
import { alive, pidIn } from "./helpers.ts";

/**
 * A tool that starts a daemon in a session of its own and ends once the daemon has left its
 * process group (the daemon writes its pid after `setsid`).
 */
const DAEMONIZING = (pidFile: string, wait: string) =>
  `#!/bin/sh
if [ "$1" = "--help" ]; then echo "daemonizing - leave a process behind"; exit 0; fi
setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -s ${pidFile} ]; do sleep 0.01; done
${wait}
echo started
`;

Deno.test("a daemon a tool left running in its own session is ended once the tool has ended", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  const pidFile = join(dir.path, "daemon.pid");
  await makeTool(tools, "daemonizing", DAEMONIZING(pidFile, ""));
  await using t = await testRuntime({ toolsDirs: [tools], config: { shipped_tools: false } });
  const r = await runTool(t.rt, { name: "daemonizing", args: {}, caller: "person" });
  assert.equal(r.said, "started\n");
  const pid = await pidIn(pidFile);
  // It left the group, so ending the group did not end it.
  assert.equal(alive(pid), true);
  assert.ok(sweepNow() >= 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false);
});

Deno.test("a timed-out tool's escaped daemon is ended, and so is one left when magi call exits", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  await makeTool(tools, "slow-daemon", DAEMONIZING(join(dir.path, "slow.pid"), "sleep 30"));
  await makeTool(tools, "quick-daemon", DAEMONIZING(join(dir.path, "quick.pid"), ""));
  await using t = await testRuntime({ toolsDirs: [tools], config: { shipped_tools: false } });
  const slow = await runTool(t.rt, {
    name: "slow-daemon",
    args: { timeout_seconds: 0.5 },
    caller: "person",
  });
  assert.equal(slow.is_error, true);
  const slowPid = await pidIn(join(dir.path, "slow.pid"));
  sweepNow();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(slowPid), false);

  const run = await magi(["call", "quick-daemon", "--tools-dir", tools], { cwd: dir.path });
  assert.equal(run.code, 0, run.stderr);
  const quickPid = await pidIn(join(dir.path, "quick.pid"));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(quickPid), false, "magi call left its tool's daemon running");
});
