/**
 * The small interface every provider implements: one streaming request (a turn) that
 * returns the assistant's message — its text and its tool calls — and reports text as it
 * streams. Also the retry policy around a turn and the provider error a run ends with.
 *
 * @module
 */
import type { ImageRef } from "./images.ts";
import type { Declaration } from "../core/types.ts";
import type { ProviderConfig } from "../config/providers.ts";

export type { ProviderConfig } from "../config/providers.ts";

/** A tool call as the model made it, with the registry's tool name (mapped back). */
export interface ToolCallRequest {
  /** The provider's call id (generated when the provider gave none). */
  id: string;
  name: string;
  /** The arguments as JSON text, as the model sent them. */
  arguments: string;
}

/** One tool result as the model reads it: `said`, never `shown`. */
export interface ToolResultMessage {
  id: string;
  name: string;
  said: string;
  is_error: boolean;
  /** Images the result carries, as files (mcpb: lib/agent/images.ts). */
  images?: ImageRef[];
}

/**
 * An Anthropic thinking block as the model sent it. The API wants it back, unchanged and
 * with its signature, in the assistant message that precedes tool results.
 */
export type ThinkingBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** A message of the conversation, provider-neutral; the transcript stores these. */
export type Message =
  | { role: "user"; text: string }
  | {
    role: "assistant";
    text: string;
    tool_calls: ToolCallRequest[];
    /** Anthropic thinking blocks, sent back as they came. */
    thinking?: ThinkingBlock[];
  }
  | { role: "tool"; result: ToolResultMessage };

/**
 * Token counts a provider reported for one request. `input_tokens` counts the whole prompt,
 * cached parts included; `cached_tokens` is the part read from the provider's prompt cache
 * (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`,
 * llama.cpp `timings.cache_n`); `cache_write_tokens` the part written to it (Anthropic
 * `cache_creation_input_tokens`); `reasoning_tokens` the part of the output spent thinking.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
  /** magi's estimate of the request before it was sent (set by the loop, lib/agent/tokens.ts). */
  estimated_tokens?: number;
}

/** What one turn asks of the model. */
export interface TurnRequest {
  system: string;
  messages: Message[];
  tools: Declaration[];
  /** Aborts the request (Ctrl-C in `magi chat`). */
  signal?: AbortSignal;
  /** Called with each piece of text as it streams. */
  onText?: (delta: string) => void;
  /** Called with each piece of the model's reasoning as it streams (shown, never said). */
  onReasoning?: (delta: string) => void;
  /** Overrides the configured longest answer (a summary request asks for less). */
  maxTokens?: number;
}

/** What one turn produced. */
export interface TurnResult {
  text: string;
  tool_calls: ToolCallRequest[];
  usage?: Usage;
  /** The provider's stop reason, as it sent it ("stop", "tool_calls", "end_turn", …). */
  stop: string;
  /** A refusal the model streamed apart from its text (OpenAI `delta.refusal`). */
  refusal?: string;
  /** The model's reasoning as text (llama.cpp `reasoning_content`, Ollama `reasoning`, Anthropic thinking). */
  reasoning?: string;
  /** Anthropic thinking blocks with their signatures, to send back. */
  thinking?: ThinkingBlock[];
}

/** A provider: one kind of wire format, configured with a base URL, a model and a key. */
export interface Provider {
  /** The configured name, such as "ollama". */
  readonly name: string;
  readonly model: string;
  /**
   * Sends one turn and streams the answer.
   *
   * @throws ProviderError when the provider refuses or fails after the SDK's retries
   * @throws StreamCutError when the stream ends before the model finished (retryable)
   */
  turn(request: TurnRequest): Promise<TurnResult>;
  /**
   * The context window the server itself reports for the model (llama.cpp `/props`, Ollama
   * `/api/show`, vLLM `/v1/models`), in tokens; undefined when it says nothing or was not
   * asked (config `providers.NAME.server`).
   */
  serverWindow?(): Promise<number | undefined>;
}

/** A provider failure that ends the run, with a message a person can act on. */
export class ProviderError extends Error {
  override name = "ProviderError";
}

/**
 * The provider refused the request because the prompt does not fit its context window:
 * the loop compacts the conversation once and sends the turn again.
 */
export class ContextLengthError extends ProviderError {
  override name = "ContextLengthError";
}

/**
 * Whether a provider's error message says the prompt is longer than the context window
 * (OpenAI `context_length_exceeded`, vLLM "maximum context length", Anthropic "prompt is
 * too long", llama.cpp "exceeds the available context size", Ollama/OpenRouter wording).
 */
export function isContextLengthMessage(message: string): boolean {
  return /context_length_exceeded|maximum context length|maximum model length|context length|prompt is too long|exceeds the available context size|context window|too many tokens|reduce the length of the messages/i
    .test(message);
}

/** The stream ended before the model finished its answer: the turn may be retried. */
export class StreamCutError extends Error {
  override name = "StreamCutError";
}

/** Everything a provider file needs to build its client. */
export interface ProviderSettings {
  name: string;
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** Time limit of one request in milliseconds. */
  timeoutMs: number;
  maxRetries: number;
  maxTokens: number;
  /** The `parallel_tool_calls` field to send, if any. */
  parallelToolCalls?: boolean;
  server?: ProviderConfig["server"];
  thinkingBudget?: number;
  reasoningEffort?: ProviderConfig["reasoning_effort"];
  /** The fetch the SDK uses (lib/agent/http_watch.ts: its retries made visible). */
  fetch?: typeof fetch;
}

/**
 * Sends a turn, retrying when the stream is cut mid-way (the SDKs themselves retry 429,
 * 5xx and connection failures before a response starts), with exponential backoff from
 * `baseDelayMs` milliseconds. `onRetry` is told before each new attempt.
 *
 * @throws ProviderError when every attempt failed
 */
export async function turnWithRetries(
  provider: Provider,
  request: TurnRequest,
  maxRetries: number,
  onRetry: (message: string) => void,
  baseDelayMs = 250,
): Promise<TurnResult> {
  for (let attempt = 0;; attempt++) {
    try {
      return await provider.turn(request);
    } catch (error) {
      if (!(error instanceof StreamCutError) || request.signal?.aborted) throw error;
      if (attempt >= maxRetries) {
        throw new ProviderError(
          `provider "${provider.name}": ${error.message}; gave up after ${attempt + 1} attempts`,
        );
      }
      onRetry(
        `provider "${provider.name}": ${error.message}; retrying (${attempt + 2}/${
          maxRetries + 1
        })`,
      );
      await sleep(baseDelayMs * 2 ** attempt, request.signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** A message for an SDK error: status, the provider's own message, never a header. */
export function describeError(name: string, error: unknown): string {
  const e = error as {
    status?: number;
    message?: string;
    error?: { message?: string; error?: { message?: string } };
  };
  const status = typeof e?.status === "number" ? `HTTP ${e.status}: ` : "";
  const message = e?.error?.error?.message ?? e?.error?.message ?? e?.message ?? String(error);
  return `provider "${name}": ${status}${message}`;
}

/**
 * {@link providerError} for an error an SDK raised while a stream was open: one without an
 * HTTP status came in the stream itself (vLLM's `{"object":"error"}`, OpenRouter's `error`).
 */
export function streamError(
  name: string,
  error: Parameters<typeof providerError>[1] & { status?: number },
): ProviderError {
  const e = providerError(name, error);
  if (error.status === undefined) {
    e.message = e.message.replace(/^(provider "[^"]*": )/, "$1the stream reported an error: ");
  }
  return e;
}

/**
 * The error a run ends with for an SDK error: a {@link ContextLengthError} when the provider
 * says the prompt does not fit (by its code or its message), else a {@link ProviderError}.
 */
export function providerError(name: string, error: unknown): ProviderError {
  const message = describeError(name, error);
  const code = (error as { code?: unknown; error?: { code?: unknown } })?.code ??
    (error as { error?: { code?: unknown } })?.error?.code;
  return code === "context_length_exceeded" || isContextLengthMessage(message)
    ? new ContextLengthError(message)
    : new ProviderError(message);
}

/**
 * The signal a streaming request is sent with: aborted when the caller's signal is, or when
 * no data arrived for `idleMs` milliseconds after {@link StreamWatch.touch} was first called
 * (the SDKs' own time limit ends when the response starts; a stream that stalls after that
 * is cut here, and the turn is retried).
 */
export class StreamWatch {
  readonly #controller = new AbortController();
  readonly #idleMs: number;
  readonly #parent: AbortSignal | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stalled = false;
  readonly #onParent = () => this.#controller.abort(this.#parent?.reason);

  constructor(idleMs: number, parent?: AbortSignal) {
    this.#idleMs = idleMs;
    this.#parent = parent;
    if (parent?.aborted) this.#controller.abort(parent.reason);
    parent?.addEventListener("abort", this.#onParent, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the stream was cut for being idle. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** Data arrived: the idle clock starts again. */
  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#stalled = true;
      this.#controller.abort(new Error("stalled"));
    }, this.#idleMs);
  }

  /** Stops watching. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#parent?.removeEventListener("abort", this.#onParent);
  }

  /**
   * Stops watching a request that failed before its stream opened.
   *
   * @returns what to throw: `error` itself where the caller's signal was aborted (its
   *   cancel), else the {@link providerError} for it
   */
  openFailed(name: string, error: unknown): unknown {
    this.stop();
    return this.#parent?.aborted ? error : providerError(name, error);
  }
}
