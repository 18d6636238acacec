/**
 * A tool call's environment: the providers' API-key variables are withheld from tools (config
 * `secrets.pass_env` names those a tool may still see); everything else passes.
 */
import assert from "node:assert/strict";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const KEY = "sk-proj-withheldKEY0123456789abcdefABCDEF";
const LINE =
  'echo "openai=${OPENAI_API_KEY:-unset} custom=${MY_LLM_KEY:-unset} other=${OTHER:-unset}"';

async function seen(config: Record<string, unknown>): Promise<string> {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    env: { OPENAI_API_KEY: KEY, MY_LLM_KEY: KEY + "2", OTHER: "plain-value" },
    config: {
      shipped_tools: false,
      roots: [dir.path],
      sandbox: { mode: "off" },
      providers: { mine: { kind: "openai", api_key_env: "MY_LLM_KEY" } },
      ...config,
    },
  });
  const r = await runTool(t.rt, { name: "run", args: { command: LINE }, caller: "person" });
  assert.equal(r.is_error, false, r.said);
  return r.said;
}

Deno.test("a tool does not see the providers' API keys (presets and config), but sees the rest", async () => {
  const said = await seen({});
  assert.match(said, /openai=unset custom=unset other=plain-value/);
});

Deno.test("secrets.pass_env lets a tool see a key it names (still masked in what it says)", async () => {
  const said = await seen({ secrets: { pass_env: ["MY_LLM_KEY"] } });
  assert.match(said, /openai=unset custom=(?!unset)\S+ other=plain-value/);
  assert.ok(!said.includes(KEY), said);
});
