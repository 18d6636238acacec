/**
 * Asking a local server for its context window, where it says: llama.cpp `GET /props`
 * (`default_generation_settings.n_ctx`), Ollama `POST /api/show` (the model's `num_ctx`
 * parameter; without one, Ollama's default of 4096 tokens, which it applies whatever the
 * model was trained for), vLLM `GET /v1/models` (`max_model_len`). Only the server named by
 * config `providers.NAME.server` is asked, once, within 3 seconds; any failure is silence.
 *
 * @module
 */
import type { ProviderSettings } from "./provider.ts";

/** Ollama's context window when the model sets no `num_ctx` (tokens). */
export const OLLAMA_DEFAULT_NUM_CTX = 4096;

const ASK_MS = 3000;

/** The server's root: the base URL without a trailing `/v1`. */
function rootOf(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

async function getJson(url: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(ASK_MS) });
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  return await response.json();
}

function positive(n: unknown): number | undefined {
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * The window the configured server reports for `settings.model`, in tokens, or undefined
 * (no `server` configured, no base URL, or the server did not say).
 */
export async function askServerWindow(settings: ProviderSettings): Promise<number | undefined> {
  if (!settings.server || !settings.baseURL) return undefined;
  const root = rootOf(settings.baseURL);
  try {
    switch (settings.server) {
      case "llamacpp": {
        const props = await getJson(`${root}/props`) as {
          default_generation_settings?: { n_ctx?: unknown };
          n_ctx?: unknown;
        } | undefined;
        return positive(props?.default_generation_settings?.n_ctx) ?? positive(props?.n_ctx);
      }
      case "ollama": {
        const show = await getJson(`${root}/api/show`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: settings.model }),
        }) as { parameters?: unknown } | undefined;
        if (!show) return undefined;
        const m = typeof show.parameters === "string"
          ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(show.parameters)
          : null;
        return m ? positive(Number(m[1])) : OLLAMA_DEFAULT_NUM_CTX;
      }
      case "vllm": {
        const models = await getJson(`${root}/v1/models`) as {
          data?: { id?: string; max_model_len?: unknown }[];
        } | undefined;
        const entry = models?.data?.find((d) => d.id === settings.model) ?? models?.data?.[0];
        return positive(entry?.max_model_len);
      }
    }
  } catch {
    return undefined;
  }
}
