import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { magi, REPO, tempDir, testRuntime } from "../helpers.ts";

/** The seed's `branch` example, exactly as printed there. */
const SEED_BRANCH = `magi.tool("branch", {
  description = "the git branch this directory is on",
  needs = { },
  run = function()
    local out = magi.exec("git", { "branch", "--show-current" })
    return {
      said  = out,                       -- the model reads this. costs context.
      shown = "on " .. out,              -- the person sees this. costs nothing.
    }
  end,
})
`;

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

async function repo(dir: string, branch: string): Promise<void> {
  await git(dir, "init", "-q", "-b", branch);
  await Deno.writeTextFile(join(dir, "a.txt"), "one\n");
  await git(dir, "add", "a.txt");
  await git(dir, "commit", "-q", "-m", "first");
}

Deno.test("the shipped branch declaration is the seed's example, unchanged", async () => {
  assert.equal(await Deno.readTextFile(join(REPO, "tools", "branch.lua")), SEED_BRANCH);
});

Deno.test("the seed's branch inside a real git repository: said is the branch, shown is 'on <branch>'", async () => {
  await using dir = await tempDir();
  await repo(dir.path, "seed-branch");
  const run = await magi(["call", "--json", "branch"], { cwd: dir.path });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), {
    name: "branch",
    said: "seed-branch",
    shown: "on seed-branch",
    is_error: false,
    spill: null,
  });
  const tools = await magi(["tools", "--json"], { cwd: dir.path });
  const branch = JSON.parse(tools.stdout).find((t: { name: string }) => t.name === "branch");
  assert.deepEqual(branch, {
    name: "branch",
    description: "the git branch this directory is on",
    parameters: { type: "object", properties: {} },
  });
});

Deno.test("git_diff_stat: one line for the model, the whole --stat for the person", async () => {
  await using dir = await tempDir();
  await repo(dir.path, "main");
  await using t = await testRuntime({ cwd: dir.path });
  const clean = await runTool(t.rt, { name: "git_diff_stat", args: {} });
  assert.equal(clean.said, "no changes");
  await Deno.writeTextFile(join(dir.path, "a.txt"), "one\ntwo\nthree\n");
  const changed = await runTool(t.rt, { name: "git_diff_stat", args: {} });
  assert.equal(changed.is_error, false, changed.said);
  assert.equal(changed.said, "1 file changed, 2 insertions(+)");
  assert.match(changed.shown, /a\.txt \| 2 \+\+\n 1 file changed, 2 insertions\(\+\)/);
  const staged = await runTool(t.rt, { name: "git_diff_stat", args: { staged: true } });
  assert.equal(staged.said, "no changes");
  const option = await runTool(t.rt, { name: "git_diff_stat", args: { base: "--output=x" } });
  assert.equal(option.is_error, true);
});

Deno.test("todo lists TODO and FIXME lines as file:line: text", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({ cwd: dir.path });
  const none = await runTool(t.rt, { name: "todo", args: {} });
  assert.equal(none.said, "no TODO or FIXME found");
  await Deno.mkdir(join(dir.path, "src"));
  await Deno.writeTextFile(
    join(dir.path, "src", "a.ts"),
    "x\n// TODO: split this\n// FIXME broken\n",
  );
  await Deno.writeTextFile(join(dir.path, "b.md"), "TODOS are not a marker\n");
  const found = await runTool(t.rt, { name: "todo", args: {} });
  assert.equal(found.said, "src/a.ts:2:// TODO: split this\nsrc/a.ts:3:// FIXME broken");
  assert.match(found.shown, /^2 TODO\/FIXME lines\n/);
  const limited = await runTool(t.rt, { name: "todo", args: { limit: 1 } });
  assert.equal(limited.said, "src/a.ts:2:// TODO: split this\n… and 1 more");
});
