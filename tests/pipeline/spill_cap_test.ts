import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

/** A tool printing a head marker, `lines` numbered lines and a tail marker. */
async function floodTool(dir: string): Promise<string> {
  const tools = join(dir, "tools");
  await makeTool(
    tools,
    "spew",
    `#!/bin/sh
if [ "$1" = "--help" ]; then printf 'spew — print many lines\\nspew <count>\\n'; exit 0; fi
echo "FIRST-LINE-OF-OUTPUT"
seq 1 "$1" | sed "s/^/middle line /"
echo "LAST-LINE-OF-OUTPUT"
`,
  );
  return tools;
}

Deno.test("limits.spill_bytes caps the spill file: its head and tail are kept, and both notes say so", async () => {
  await using dir = await tempDir();
  const cap = 65536;
  await using t = await testRuntime({
    toolsDirs: [await floodTool(dir.path)],
    config: { shipped_tools: false, limits: { spill_bytes: cap } },
  });
  const r = await runTool(t.rt, { name: "spew", args: { args: ["200000"] } });
  assert.equal(r.is_error, false, r.said);
  assert.ok(r.spill, "the output was spilled");
  const spilled = await Deno.readTextFile(r.spill);
  const size = new TextEncoder().encode(spilled).length;
  assert.ok(size <= cap + 200, `the spill file has ${size} bytes, over the cap of ${cap}`);
  assert.ok(spilled.startsWith("FIRST-LINE-OF-OUTPUT\nmiddle line 1\n"));
  assert.ok(spilled.endsWith("middle line 200000\nLAST-LINE-OF-OUTPUT\n"));
  const note = /\[magi: spill file cut: kept first (\d+) and last (\d+) of (\d+) bytes\]/.exec(
    spilled,
  );
  assert.ok(note, "the spill file says it was cut");
  const [head, tail, total] = note.slice(1).map(Number);
  assert.equal(head + tail, cap);
  // 21 + 200000 "middle line N\n" lines + 20: the whole output's size.
  let expected = 21 + 20;
  for (let n = 1; n <= 200000; n++) expected += "middle line \n".length + String(n).length;
  assert.equal(total, expected);
  assert.ok(
    r.said.includes(
      `spill file cut: kept first ${head} and last ${tail} of ${total} bytes in ${r.spill}`,
    ),
    r.said.slice(0, 2000),
  );
  assert.ok(!r.said.includes("the whole output is in"));
});

Deno.test("output under limits.spill_bytes is spilled whole", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    toolsDirs: [await floodTool(dir.path)],
    config: { shipped_tools: false, limits: { spill_bytes: 1048576 } },
  });
  const r = await runTool(t.rt, { name: "spew", args: { args: ["5000"] } });
  assert.ok(r.spill);
  const spilled = await Deno.readTextFile(r.spill);
  assert.ok(!spilled.includes("spill file cut"));
  assert.equal(spilled.split("\n").length - 1, 5002);
  assert.ok(r.said.includes(`the whole output is in ${r.spill}`));
});
