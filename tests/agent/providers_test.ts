import assert from "node:assert/strict";
import { join } from "node:path";
import { chooseProvider } from "../../lib/agent/providers.ts";
import { readConfigFile } from "../../lib/config/load.ts";
import { tempDir, testRuntime, writeConfig } from "../helpers.ts";

Deno.test("chooseProvider() takes --provider, then config provider, then the only one configured", () => {
  const providers = {
    mine: { kind: "openai", base_url: "http://127.0.0.1:1/v1", model: "m1" },
  } as const;
  assert.equal(chooseProvider({ providers }, {}, {}).provider.name, "mine");
  const both = { providers: { ...providers, other: { kind: "anthropic", model: "m2" } } } as const;
  assert.throws(() => chooseProvider(both, {}, {}), /no provider chosen: pass --provider NAME/);
  assert.equal(chooseProvider({ ...both, provider: "other" }, {}, {}).provider.model, "m2");
  const chosen = chooseProvider(both, { provider: "ollama", model: "qwen3" }, {});
  assert.equal(chosen.provider.name, "ollama");
  assert.equal(chosen.provider.model, "qwen3");
});

Deno.test("chooseProvider() names what is missing: a model, a key, a provider", () => {
  assert.throws(
    () => chooseProvider({}, { provider: "ollama" }, {}),
    /provider "ollama" has no model: pass --model NAME or set "providers.ollama.model"/,
  );
  assert.throws(
    () => chooseProvider({}, { provider: "openai", model: "gpt" }, {}),
    /provider "openai" needs its API key in the environment variable "OPENAI_API_KEY"/,
  );
  assert.throws(() => chooseProvider({}, { provider: "nope" }, {}), /unknown provider "nope"/);
});

Deno.test("config providers is checked against its JSON Schema", async () => {
  await using dir = await tempDir();
  const bad = await writeConfig(dir.path, { providers: { x: { kind: "gemini", model: "m" } } });
  assert.throws(
    () => readConfigFile(bad),
    /key "providers": field "x\.kind" must be one of: "openai", "anthropic" \(expected an object of providers/,
  );
  const extra = await writeConfig(dir.path, { providers: { x: { kind: "openai", key: "sk-1" } } });
  assert.throws(() => readConfigFile(extra), /key "providers"/);
  const good = await writeConfig(dir.path, {
    providers: { x: { kind: "openai", model: "m", api_key_env: "X_ACCESS" } },
    provider: "x",
    sessions_dir: "sessions",
  });
  assert.equal(readConfigFile(good).sessions_dir, join(dir.path, "sessions"));
});

Deno.test("a provider's api_key_env value is masked even when its name does not look secret", async () => {
  await using t = await testRuntime({
    env: { LLM_ACCESS: "value-of-the-llm-access" },
    config: { providers: { x: { kind: "openai", model: "m", api_key_env: "LLM_ACCESS" } } },
  });
  assert.equal(t.rt.masker.maskText("key=value-of-the-llm-access"), "key=$LLM_ACCESS");
});
