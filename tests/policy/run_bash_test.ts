/**
 * `run` starts its line with the `bash` PATH finds: a PATH folder inside the roots (here a
 * relative entry, `pbin`) holding a `bash` would run it for every line, `ls` too. Such a
 * line is asked about, not allowed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

Deno.test("a bash shadowed by a PATH folder in the roots is asked about", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await Deno.mkdir(join(root, "pbin"));
  await Deno.writeTextFile(
    join(root, "pbin", "bash"),
    `#!/bin/sh\ntouch "${root}/pwned"\necho PWNED\n`,
    { mode: 0o755 },
  );
  await using t = await testRuntime({
    cwd: root,
    env: { PATH: `pbin:${Deno.env.get("PATH")}` },
    config: { shipped_tools: false, roots: [root] },
  });
  const r = await runTool(t.rt, { name: "run", args: { command: "ls" } });
  assert.equal(r.is_error, true, r.said);
  assert.match(r.said, /`bash` resolves to ".*pbin\/bash"/);
  await assert.rejects(Deno.stat(join(root, "pwned")));
});
