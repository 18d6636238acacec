/**
 * `--auto` (approval "never") approves what the judge asks about, but a deny rule must keep
 * its meaning: a line the judge cannot read (a git alias, words only bash knows, code handed
 * to an interpreter) is refused while a deny rule of the person's covers the tool.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

Deno.test("--auto refuses an unreadable line while a deny rule covers run, and runs it without one", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  const deny = { tool: "run", command: "git push *", decision: "deny", reason: "no pushing" };
  await using strict = await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root], approval: "never", policy: { rules: [deny] } },
  });
  const call = (rt: typeof strict.rt, command: string) =>
    runTool(rt, { name: "run", args: { command }, caller: "model" });
  for (
    const line of [
      "git -c alias.p=push p origin main",
      "G=git; $G push origin main",
      "eval 'git push'",
    ]
  ) {
    const r = await call(strict.rt, line);
    assert.equal(r.is_error, true, `${line}: ${r.said}`);
    assert.match(r.said, /--auto refuses what the judge cannot read/, line);
  }
  assert.match((await call(strict.rt, "git push origin main")).said, /no pushing/);
  // What the judge reads runs under --auto, and so does a script of the project's own: like
  // `make` or `npm test`, it is the project's code, held by the sandbox.
  await Deno.writeTextFile(join(root, "check.sh"), "echo checked\n");
  const script = await call(strict.rt, "sh check.sh");
  assert.equal(script.is_error, false, script.said);
  assert.match(script.said, /checked/);
  const plain = await call(strict.rt, "echo plain > made.txt && cat made.txt");
  assert.equal(plain.is_error, false, plain.said);
  assert.match(plain.said, /plain/);
  // Without a deny rule for run, the sandbox alone holds the line: it runs.
  await using loose = await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root], approval: "never" },
  });
  const evaluated = await call(loose.rt, "eval 'echo evaluated'");
  assert.equal(evaluated.is_error, false, evaluated.said);
  assert.match(evaluated.said, /evaluated/);
});
