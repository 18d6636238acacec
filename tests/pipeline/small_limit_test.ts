import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

Deno.test("at the smallest said_bytes (1024) a cut, failing result with a stderr tail stays within it", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  await makeTool(
    tools,
    "noisy-fail",
    `#!/bin/sh
if [ "$1" = "--help" ]; then echo "noisy-fail - print a lot and fail"; exit 0; fi
seq 1 3000 | sed 's/^.*00$/error: this step failed with a message long enough to fill the room/'
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "error: something went wrong on step $i of the build" >&2; done
exit 3
`,
  );
  await using t = await testRuntime({
    toolsDirs: [tools],
    config: { shipped_tools: false, limits: { said_bytes: 1024, shown_bytes: 1024 } },
  });
  const r = await runTool(t.rt, { name: "noisy-fail", args: {}, caller: "person" });
  assert.equal(r.is_error, true);
  assert.ok(new TextEncoder().encode(r.said).length <= 1024, `${r.said.length} bytes`);
  assert.ok(new TextEncoder().encode(r.shown).length <= 1024, `${r.shown.length} bytes`);
  assert.match(r.said, /^1\n2\n/);
  assert.match(r.said, /exit status 3/);
  assert.ok(r.spill);
});
