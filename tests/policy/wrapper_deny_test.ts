/**
 * The corpus's wrapper attempts meet a deny rule, not only the default `ask`: with a rule
 * denying `rm`, each wrapped, nested or listed `rm` is denied by that rule, also in the
 * person's own call (`magi call`), where an `ask` would be approved and run. A wrapper that
 * was not unwrapped would let the line through.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const WRAPPED = [
  "rm -rf victim",
  "rm -fr victim",
  "rm -r -f victim",
  "timeout -s KILL 5 rm victim",
  "timeout --signal=KILL 5 rm victim",
  "nice -n 5 rm victim",
  "nice -- rm victim",
  "env FOO=1 rm victim",
  "env -i rm victim",
  "nohup rm victim",
  "stdbuf -o0 rm victim",
  "time -p rm victim",
  "command rm victim",
  "exec rm victim",
  "xargs rm < list",
  "xargs -a list rm",
  "cat list | xargs -I{} rm {}",
  "sh -c 'rm victim'",
  `bash -c "sh -c 'rm victim'"`,
  "bash -lc 'rm victim'",
  "timeout 5 nice -n 1 env A=1 nohup stdbuf -oL command rm -fr victim",
  "echo $(rm victim)",
  "echo `rm victim`",
  "ls; rm victim",
  "ls && rm victim",
  "false || rm victim",
  "ls | rm victim",
  "(rm victim)",
  "{ rm victim; }",
  "cat <(rm victim)",
  "/bin/rm victim",
  "\\rm victim",
  `r"m" victim`,
  "env -S 'rm victim'",
  "env --split-string='rm -f' victim",
  "setsid rm victim",
  "setsid -f rm victim",
  "sudo rm victim",
  "sudo -u root rm victim",
  "busybox rm victim",
  "ionice -c 3 rm victim",
  "taskset 0x1 rm victim",
  "taskset -c 0 rm victim",
  "chrt 0 rm victim",
  "doas rm victim",
  "su -c 'rm victim'",
  "su root -c 'rm victim'",
  "flock list -c 'rm victim'",
  "flock list rm victim",
  "watch -n 1 rm victim",
  "watch 'rm victim'",
  "watch -x rm victim",
];

Deno.test("wrapped rm meets a rule denying rm, even in the person's own call", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "victim"), "keep\n");
  await Deno.writeTextFile(join(dir.path, "list"), "victim\n");
  await using t = await testRuntime({
    cwd: dir.path,
    config: {
      shipped_tools: false,
      roots: [dir.path],
      policy: { rules: [{ id: "no-rm", tool: "run", command: "rm *", decision: "deny" }] },
    },
  });
  const problems: string[] = [];
  for (const command of WRAPPED) {
    const r = await runTool(t.rt, { name: "run", args: { command }, caller: "person" });
    if (!r.is_error || !/denied by the policy — deny by rule "no-rm"/.test(r.said)) {
      problems.push(`${command}: ${r.said}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(await Deno.readTextFile(join(dir.path, "victim")), "keep\n");
});
