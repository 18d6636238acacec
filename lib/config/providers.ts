/**
 * The config side of providers, kept free of the SDKs so loading the config stays light:
 * the presets, the JSON Schema of `providers`, and the names of the API-key variables.
 *
 * @module
 */

/** How a provider is configured (config `providers.NAME`). */
export interface ProviderConfig {
  kind: "openai" | "anthropic";
  /** Base URL, such as `http://localhost:11434/v1`; the SDK's default when absent. */
  base_url?: string;
  model?: string;
  /** The environment variable holding the API key (its value is masked everywhere). */
  api_key_env?: string;
  /** Time limit of one request in seconds (default 600). */
  timeout_seconds?: number;
  /** Retries on 429, 5xx and dropped connections (default 3). */
  max_retries?: number;
  /** The longest answer in tokens, sent to every provider (default 8192). */
  max_tokens?: number;
  /** The model's context window in tokens; else the server's word, else a known default. */
  context_window?: number;
  /** Which server to ask for its context window: `llamacpp`, `ollama` or `vllm`. */
  server?: "llamacpp" | "ollama" | "vllm";
  /** Compact when a request would pass this share of the window (default 0.8). */
  compact_at?: number;
  /** Ask for extended thinking with this budget in tokens (Anthropic; at least 1024). */
  thinking_budget?: number;
  /** `reasoning_effort` to send (OpenAI-compatible reasoning models). */
  reasoning_effort?: "minimal" | "low" | "medium" | "high";
  /**
   * Send `parallel_tool_calls` (OpenAI-compatible only): llama.cpp makes several calls in one
   * answer only when asked; some OpenAI models refuse the field. Not sent by default.
   */
  parallel_tool_calls?: boolean;
}

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
export function apiKeyEnvNames(providers: unknown): string[] {
  const table = { ...PRESETS, ...(providers as Record<string, ProviderConfig> | undefined) };
  return Object.values(table).flatMap((p) => p?.api_key_env ? [p.api_key_env] : []);
}
