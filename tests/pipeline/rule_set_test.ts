/**
 * A credential under a name no marker catches, in a format only the maintained rule set
 * (secretlint's recommended preset) knows, is a secret: masked in what the model reads. The
 * verdicts are cached privately, without the values.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { ruleSetCredentials } from "../../lib/pipeline/rule_set.ts";
import { tempDir, testRuntime } from "../helpers.ts";

// A Linear API key: not in token_formats.json, flagged by secretlint's preset.
const LINEAR = "lin_api_" + "a1B2c3D4e5".repeat(4);

Deno.test("ruleSetCredentials() flags a Linear key, not a plain value, and caches without values", async () => {
  await using dir = await tempDir();
  const cache = join(dir.path, "cache", "secret-rules.json");
  const env = { ISSUES: LINEAR, PLAIN: "just-a-long-value-but-nothing-secret" };
  assert.deepEqual(await ruleSetCredentials(env, cache), ["ISSUES"]);
  const text = await Deno.readTextFile(cache);
  assert.ok(!text.includes(LINEAR) && !text.includes("just-a-long"), text);
  assert.equal((await Deno.stat(cache)).mode! & 0o777, 0o600);
  // From the cache: the same answer.
  assert.deepEqual(await ruleSetCredentials(env, cache), ["ISSUES"]);
});

Deno.test("a value the rule set flags is masked in a tool's result", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    env: { ISSUES: LINEAR },
    config: { shipped_tools: false, roots: [dir.path] },
  });
  const r = await runTool(t.rt, {
    name: "run",
    args: { command: 'echo "key: $ISSUES"' },
    caller: "person",
  });
  assert.ok(!r.said.includes(LINEAR), r.said);
  assert.match(r.said, /key: \$ISSUES/);
});
