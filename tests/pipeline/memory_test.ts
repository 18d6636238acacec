/**
 * A large output streams to its spill file, which stops at `limits.spill_bytes`. The memory
 * budget for 1 GiB of output is a figure of `deno task bench:memory` (scripts/bench_memory.ts),
 * not an assertion here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir, TESTDATA, writeConfig } from "../helpers.ts";

Deno.test("a large output's spill file stops at limits.spill_bytes: head, a note, tail", async () => {
  await using home = await tempDir();
  const cap = 1048576;
  const config = await writeConfig(home.path, { limits: { spill_bytes: cap } });
  const run = await magi([
    "call",
    "gib",
    JSON.stringify({ args: ["16"] }),
    "--json",
    "--config",
    config,
    "--tools-dir",
    join(TESTDATA, "big-tools"),
  ], { home: join(home.path, "home") });
  const result = JSON.parse(run.stdout);
  assert.ok(result.spill, "the output was spilled");
  // The head and the tail, and a note between.
  const size = (await Deno.stat(result.spill)).size;
  assert.ok(size > cap && size < cap + 200, `${size}`);
});
