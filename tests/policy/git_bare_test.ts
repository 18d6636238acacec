/**
 * A project can ship a bare repository as plain files (`fixtures/x.git/config`, `HEAD`,
 * `objects/`): git finds it from inside it, and its config names programs git starts
 * (`diff.external`). A `git diff` there is no read-only command, so a model's call is asked
 * about (here: refused, with no one to ask) and the program never starts; the project's own
 * clone is read as before.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

Deno.test("git in a bare repository shipped inside the roots is asked about", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await git(root, "init", "-q");
  await Deno.writeTextFile(join(root, "f"), "a\n");
  await git(root, "add", "f");
  await git(root, "commit", "-qm", "one");
  await Deno.writeTextFile(join(root, "f"), "b\n");
  await git(root, "commit", "-qam", "two");
  await git(root, "clone", "-q", "--bare", ".", "fixtures/x.git");
  const evil = join(root, "evil");
  await Deno.writeTextFile(evil, `#!/bin/sh\ntouch "${root}/pwned"\necho PWNED\n`, { mode: 0o755 });
  await git(join(root, "fixtures", "x.git"), "config", "diff.external", evil);
  await using t = await testRuntime({ cwd: root, config: { shipped_tools: false, roots: [root] } });
  for (
    const command of [
      "git -C fixtures/x.git diff HEAD~1 HEAD",
      "cd fixtures/x.git && git diff HEAD~1 HEAD",
      "git -C fixtures/x.git/refs diff HEAD~1 HEAD",
      "git --git-dir=fixtures/x.git diff HEAD~1 HEAD",
    ]
  ) {
    const r = await runTool(t.rt, { name: "run", args: { command } });
    assert.equal(r.is_error, true, `${command}: ${r.said}`);
    assert.ok(!r.said.includes("PWNED"), `${command}: ${r.said}`);
  }
  await assert.rejects(Deno.stat(join(root, "pwned")));
  const own = await runTool(t.rt, { name: "run", args: { command: "git log --format=%s" } });
  assert.equal(own.is_error, false, own.said);
  assert.equal(own.said, "two\none\n");
});
