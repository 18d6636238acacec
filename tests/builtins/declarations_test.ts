/**
 * The builtins' declarations, as the model is sent them, against a snapshot
 * (tests/testdata/builtin_declarations.json): a change to a description or a JSON Schema is a
 * change to what every model reads, so it shows in review. After a change you mean, rewrite
 * the snapshot: `UPDATE_SNAPSHOTS=1 deno test -A tests/builtins/declarations_test.ts`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { TESTDATA, testRuntime } from "../helpers.ts";

const SNAPSHOT = join(TESTDATA, "builtin_declarations.json");

Deno.test("the builtins' declarations are the snapshot's", async () => {
  await using t = await testRuntime({ config: { shipped_tools: false } });
  const declarations = t.rt.registry.declarations();
  assert.deepEqual(declarations.map((d) => d.name), ["edit", "grep", "read", "run", "write"]);
  const text = JSON.stringify(declarations, null, 2) + "\n";
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") await Deno.writeTextFile(SNAPSHOT, text);
  assert.deepEqual(JSON.parse(text), JSON.parse(await Deno.readTextFile(SNAPSHOT)));
});
