/**
 * From config to a provider: the `providers` table (with presets for OpenAI, Anthropic,
 * Ollama and llama.cpp on this machine), the default `provider`, `--provider`/`--model`,
 * and the API key read from the variable `api_key_env` names.
 *
 * @module
 */
import { AnthropicProvider } from "./anthropic.ts";
import { OpenAIProvider } from "./openai.ts";
import type { ContextSettings } from "./compact.ts";
import { HttpWatch } from "./http_watch.ts";
import { type Provider, type ProviderConfig, ProviderError } from "./provider.ts";
import { PRESETS } from "../config/providers.ts";

/** A provider that cannot be set up from the config and flags: a usage error (exit 2). */
export class ProviderConfigError extends Error {
  override name = "ProviderConfigError";
}

/** A provider ready for turns, and its retry budget. */
export interface ChosenProvider {
  provider: Provider;
  maxRetries: number;
  /** The longest answer asked for, in tokens. */
  maxTokens: number;
  /** The context window and when to compact. */
  context: ContextSettings;
  /** The SDK's HTTP requests: retries told to a listener, the last URL tried. */
  http: HttpWatch;
}

/**
 * Chooses and builds the provider: `--provider`, else config `provider`, else the only
 * configured one; the model from `--model`, else the entry's `model`.
 *
 * @throws ProviderConfigError naming what is missing
 */
export function chooseProvider(
  values: Record<string, unknown>,
  flags: { provider?: string; model?: string },
  env: Record<string, string>,
): ChosenProvider {
  const configured = (values.providers ?? {}) as Record<string, ProviderConfig>;
  const table = { ...PRESETS, ...configured };
  const names = Object.keys(configured);
  const name = flags.provider ??
    (typeof values.provider === "string" ? values.provider : undefined) ??
    (names.length === 1 ? names[0] : undefined);
  const known = Object.keys(table).map((n) => `"${n}"`).join(", ");
  if (!name) {
    throw new ProviderConfigError(
      `no provider chosen: pass --provider NAME or set "provider" in the config (known: ${known})`,
    );
  }
  const config = table[name];
  if (!config) throw new ProviderConfigError(`unknown provider "${name}" (known: ${known})`);
  const model = flags.model ?? config.model;
  if (!model) {
    throw new ProviderConfigError(
      `provider "${name}" has no model: pass --model NAME or set "providers.${name}.model"`,
    );
  }
  let apiKey: string | undefined;
  if (config.api_key_env) {
    apiKey = env[config.api_key_env];
    if (!apiKey) {
      throw new ProviderConfigError(
        `provider "${name}" needs its API key in the environment variable "${config.api_key_env}", which is not set`,
      );
    }
  }
  const maxRetries = config.max_retries ?? 3;
  const http = new HttpWatch(maxRetries);
  const settings = {
    name,
    model,
    baseURL: config.base_url,
    apiKey,
    timeoutMs: (config.timeout_seconds ?? 600) * 1000,
    maxRetries,
    maxTokens: config.max_tokens ?? 8192,
    parallelToolCalls: config.parallel_tool_calls,
    server: config.server,
    thinkingBudget: config.thinking_budget,
    reasoningEffort: config.reasoning_effort,
    fetch: http.fetch,
  };
  const provider = config.kind === "anthropic"
    ? new AnthropicProvider(settings)
    : new OpenAIProvider(settings);
  return {
    provider: namingUrl(provider, http),
    maxRetries,
    http,
    maxTokens: settings.maxTokens,
    context: { window: config.context_window, compactAt: config.compact_at },
  };
}

/**
 * A provider whose connection failures name the URL tried: the SDKs say only
 * "Connection error." (a stopped Ollama, a llama.cpp server on another port).
 */
function namingUrl(provider: Provider, http: HttpWatch): Provider {
  const turn = provider.turn.bind(provider);
  provider.turn = async (request) => {
    try {
      return await turn(request);
    } catch (error) {
      if (
        error instanceof ProviderError && /connection error|fetch failed|ECONNREFUSED/i.test(
          error.message,
        ) && http.lastUrl && !error.message.includes(http.lastUrl)
      ) {
        throw new ProviderError(`${error.message} (tried ${http.lastUrl}; is the server running?)`);
      }
      throw error;
    }
  };
  return provider;
}
