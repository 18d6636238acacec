/**
 * A `..` after a symlink leaves the symlink's target, as the kernel resolves it: the roots
 * check must follow it there, for `run` lines and for a Lua body's `magi.exec` alike.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { physicalPath, realPathLenient } from "../../lib/policy/roots.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

Deno.test("link/.. is the link target's parent: a run or magi.exec reaching out that way is denied", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const secret = join(dir.path, "secret");
  await Deno.mkdir(join(secret, "deep"), { recursive: true });
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(secret, "key.txt"), "the secret\n");
  // A link inside the roots to a folder outside (a cloned repository can hold one).
  await Deno.symlink(join(secret, "deep"), join(root, "link"));
  assert.equal(realPathLenient(`${root}/link/../key.txt`), join(secret, "key.txt"));
  assert.equal(physicalPath(root, "link/../none/x"), join(secret, "none", "x"));
  assert.equal(physicalPath(root, "none/../link"), join(secret, "deep"));

  await using t = await testRuntime({
    cwd: root,
    config: {
      shipped_tools: false,
      roots: [root],
      lua_dirs: [join(TESTDATA, "policy", "bodies")],
    },
  });
  for (
    const command of ["cat link/../key.txt", "git -C link/.. log", "cd link/.. && cat key.txt"]
  ) {
    const r = await runTool(t.rt, { name: "run", args: { command } });
    assert.equal(r.is_error, true, command);
    assert.match(r.said, /deny by rule "outside-roots"/, command);
    assert.ok(!r.said.includes("the secret"), command);
  }
  const body = await runTool(t.rt, {
    name: "cat_from_root",
    args: { rel: `${root.slice(1)}/link/../key.txt` },
  });
  assert.equal(body.is_error, true);
  assert.match(body.said, /"cat": denied by the policy — deny by rule "outside-roots"/);
  assert.ok(!body.said.includes("the secret"));
});
