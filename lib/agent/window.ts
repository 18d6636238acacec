/**
 * A model's context window, in tokens: config `providers.NAME.context_window` first, then
 * what the server says (`providers.NAME.server`: llama.cpp, Ollama, vLLM), then the
 * default for a well-known model, else {@link FALLBACK_WINDOW}.
 *
 * @module
 */
import type { Provider } from "./provider.ts";

/** The window assumed for a model magi knows nothing about (tokens). */
export const FALLBACK_WINDOW = 32_768;

/** Windows of well-known model families, matched against the model name (first match). */
export const KNOWN_WINDOWS: readonly [RegExp, number][] = [
  [/claude/i, 200_000],
  [/gpt-4\.1/i, 1_047_576],
  [/gpt-5/i, 400_000],
  [/(^|\/)o[134](-|$)/i, 200_000],
  [/gpt-4o|gpt-4-turbo/i, 128_000],
  [/gpt-3\.5/i, 16_385],
  [/llama-?3\.[1-3]|llama-?4/i, 131_072],
  [/qwen-?3/i, 40_960],
  [/qwen-?2\.5/i, 32_768],
  [/gemma-?3/i, 131_072],
  [/deepseek/i, 131_072],
  [/mistral|mixtral/i, 32_768],
];

/** The default window of a model by its name, or undefined when it is not known. */
export function knownWindow(model: string): number | undefined {
  return KNOWN_WINDOWS.find(([pattern]) => pattern.test(model))?.[1];
}

const asked = new WeakMap<Provider, Promise<number | undefined>>();

/**
 * Resolves the window for a provider: `configured`, else the server's (asked once per
 * provider), else the known default, else {@link FALLBACK_WINDOW}.
 */
export async function contextWindow(provider: Provider, configured?: number): Promise<number> {
  if (configured) return configured;
  let fromServer = asked.get(provider);
  if (!fromServer) {
    fromServer = provider.serverWindow?.() ?? Promise.resolve(undefined);
    asked.set(provider, fromServer);
  }
  return (await fromServer) ?? knownWindow(provider.model) ?? FALLBACK_WINDOW;
}
