/**
 * The config side of providers, kept free of the SDKs so loading the config stays light:
 * the presets, the JSON Schema of `providers`, and the names of the API-key variables.
 *
 * @module
 */
import type { ProviderConfig } from "./provider.ts";

/** Providers known without any config; a `providers` entry of the same name replaces one. */
export const PRESETS: Record<string, ProviderConfig> = {
  openai: { kind: "openai", base_url: "https://api.openai.com/v1", api_key_env: "OPENAI_API_KEY" },
  anthropic: {
    kind: "anthropic",
    base_url: "https://api.anthropic.com",
    api_key_env: "ANTHROPIC_API_KEY",
  },
  ollama: { kind: "openai", base_url: "http://localhost:11434/v1", server: "ollama" },
  llamacpp: {
    kind: "openai",
    base_url: "http://localhost:8080/v1",
    model: "default",
    parallel_tool_calls: true,
    server: "llamacpp",
  },
};

/** The JSON Schema of config `providers`. */
export const PROVIDERS_SCHEMA = {
  type: "object",
  propertyNames: { pattern: "^[A-Za-z0-9_.-]+$" },
  additionalProperties: {
    type: "object",
    required: ["kind"],
    additionalProperties: false,
    properties: {
      kind: { enum: ["openai", "anthropic"] },
      base_url: { type: "string", pattern: "^https?://" },
      model: { type: "string", minLength: 1 },
      api_key_env: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$" },
      timeout_seconds: { type: "number", exclusiveMinimum: 0 },
      max_retries: { type: "integer", minimum: 0, maximum: 10 },
      max_tokens: { type: "integer", minimum: 1 },
      parallel_tool_calls: { type: "boolean" },
      context_window: { type: "integer", minimum: 1024 },
      server: { enum: ["llamacpp", "ollama", "vllm"] },
      compact_at: { type: "number", minimum: 0.1, maximum: 0.95 },
      thinking_budget: { type: "integer", minimum: 1024 },
      reasoning_effort: { enum: ["minimal", "low", "medium", "high"] },
    },
  },
};

/** The names of the variables holding API keys (each is masked like a credential). */
export function apiKeyEnvNames(
  providers: Readonly<Record<string, Readonly<ProviderConfig>>> | undefined,
): string[] {
  const table = { ...PRESETS, ...providers };
  return Object.values(table).flatMap((p) => p?.api_key_env ? [p.api_key_env] : []);
}
