/**
 * A program word that is a link to another program is that program for the rules that deny
 * or ask: with a rule denying `rm`, `./clean victim` (clean → rm, a symlink a repository
 * can ship) and `./e rm victim` (e → env) are denied, even in the person's own call, where
 * an ask would be approved. Allow rules still need the program's own name.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

function which(name: string): string {
  const out = new Deno.Command("sh", { args: ["-c", `command -v ${name}`] }).outputSync();
  return Deno.realPathSync(new TextDecoder().decode(out.stdout).trim());
}

Deno.test("a link to rm meets a rule denying rm; a link to env is unwrapped", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await Deno.writeTextFile(join(root, "victim"), "keep\n");
  await Deno.mkdir(join(root, "tools"));
  await Deno.symlink(which("rm"), join(root, "tools", "clean"));
  await Deno.symlink(which("env"), join(root, "e"));
  await using t = await testRuntime({
    cwd: root,
    config: {
      shipped_tools: false,
      roots: [root],
      policy: { rules: [{ id: "no-rm", tool: "run", command: "rm *", decision: "deny" }] },
    },
  });
  const problems: string[] = [];
  for (
    const command of [
      "tools/clean victim",
      "cd tools && ./clean x",
      "./e rm victim",
      "./e -i sh -c 'rm victim'",
      "env tools/clean victim",
    ]
  ) {
    const r = await runTool(t.rt, { name: "run", args: { command }, caller: "person" });
    if (!r.is_error || !/deny by rule "no-rm"/.test(r.said)) problems.push(`${command}: ${r.said}`);
  }
  assert.deepEqual(problems, []);
  assert.equal(await Deno.readTextFile(join(root, "victim")), "keep\n");
  const ls = await runTool(t.rt, { name: "run", args: { command: "ls tools" } });
  assert.equal(ls.said, "clean\n", ls.said);
});
