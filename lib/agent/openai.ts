/**
 * OpenAI-compatible Chat Completions with streaming (OpenAI, Ollama's `/v1`, llama.cpp
 * server, vLLM, LM Studio, OpenRouter), through the official `openai` SDK. Tool calls are
 * gathered from streamed deltas; the servers that differ from the reference are accepted:
 * a whole call in its first chunk, `arguments` as an object, a missing or repeated `index`
 * (a new `id` starts a new call), `finish_reason: "stop"` with tool calls, and no `[DONE]`.
 *
 * @module
 */
import { openaiImageParts } from "./images.ts";
import OpenAI from "openai";
import { adaptTools, providerName, registryName } from "./adapt.ts";
import {
  type Message,
  type Provider,
  ProviderError,
  providerError,
  type ProviderSettings,
  StreamCutError,
  streamError,
  StreamWatch,
  type ToolCallRequest,
  type TurnRequest,
  type TurnResult,
  type Usage,
} from "./provider.ts";
import { askServerWindow } from "./server_window.ts";

/** One `delta.tool_calls[]` item as servers really send it. */
export interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

/**
 * Gathers tool calls from streamed deltas. A delta joins the call with its `id`; without an
 * `id`, the call last seen at its `index`; without either, the last call. A new `id` always
 * starts a new call, even at an `index` already used.
 */
export class ToolCallAccumulator {
  readonly #calls: { id: string; name: string; args: string }[] = [];
  readonly #byIndex = new Map<number, number>();
  readonly #byId = new Map<string, number>();

  /** Takes one delta item. */
  push(delta: ToolCallDelta): void {
    let at: number | undefined;
    if (typeof delta.id === "string" && delta.id !== "") {
      at = this.#byId.get(delta.id);
      if (at === undefined) {
        at = this.#calls.push({ id: delta.id, name: "", args: "" }) - 1;
        this.#byId.set(delta.id, at);
      }
    } else if (typeof delta.index === "number" && this.#byIndex.has(delta.index)) {
      at = this.#byIndex.get(delta.index)!;
    } else if (typeof delta.index !== "number" && this.#calls.length > 0) {
      at = this.#calls.length - 1;
    } else {
      at = this.#calls.push({ id: "", name: "", args: "" }) - 1;
    }
    if (typeof delta.index === "number") this.#byIndex.set(delta.index, at);
    const call = this.#calls[at];
    const name = delta.function?.name;
    if (typeof name === "string" && name !== "" && name !== call.name) {
      call.name = call.name === "" || name.startsWith(call.name) ? name : call.name + name;
    }
    const args = delta.function?.arguments;
    if (typeof args === "string") call.args += args;
    else if (typeof args === "object" && args !== null) call.args = JSON.stringify(args);
  }

  /**
   * The calls so far, in the order they started; ids are generated where missing, and empty
   * arguments become `{}` (servers refuse an empty string when it is sent back).
   */
  calls(): { id: string; name: string; arguments: string }[] {
    return this.#calls.map((c, i) => ({
      id: c.id || `call_${i + 1}`,
      name: c.name,
      arguments: c.args.trim() === "" ? "{}" : c.args,
    }));
  }
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Builds the Chat Completions `messages` from the system prompt and the conversation. */
export function openaiMessages(
  system: string,
  messages: readonly Message[],
  name: (registry: string) => string,
): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (system) out.push({ role: "system", content: system });
  // Tool results' images follow the turn's tool messages as one user message (mcpb: images.ts).
  let images: ReturnType<typeof openaiImageParts> = [];
  const flushImages = () => {
    if (images.length) out.push({ role: "user", content: images });
    images = [];
  };
  for (const m of messages) {
    if (m.role !== "tool") flushImages();
    if (m.role === "user") out.push({ role: "user", content: m.text });
    else if (m.role === "tool") {
      out.push({ role: "tool", tool_call_id: m.result.id, content: m.result.said });
      images.push(...openaiImageParts(m.result.images));
    } else if (m.tool_calls.length === 0) out.push({ role: "assistant", content: m.text });
    else {
      out.push({
        role: "assistant",
        content: m.text === "" ? null : m.text,
        tool_calls: m.tool_calls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: name(c.name), arguments: c.arguments },
        })),
      });
    }
  }
  flushImages();
  return out;
}

/** A provider speaking OpenAI-compatible Chat Completions. */
export class OpenAIProvider implements Provider {
  readonly name: string;
  readonly model: string;
  readonly #idleMs: number;
  readonly #parallel: boolean | undefined;
  readonly #client: OpenAI;
  readonly #settings: ProviderSettings;

  constructor(settings: ProviderSettings) {
    this.name = settings.name;
    this.model = settings.model;
    this.#idleMs = settings.timeoutMs;
    this.#parallel = settings.parallelToolCalls;
    this.#settings = settings;
    this.#client = new OpenAI({
      apiKey: settings.apiKey || "no-key",
      baseURL: settings.baseURL ?? "https://api.openai.com/v1",
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      ...(settings.fetch ? { fetch: settings.fetch } : {}),
      organization: null,
      project: null,
      logLevel: "off",
    });
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const adapted = adaptTools(request.tools);
    const tools = adapted.tools.map((t) => ({
      type: "function" as const,
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    const watch = new StreamWatch(this.#idleMs, request.signal);
    let stream;
    try {
      stream = await this.#client.chat.completions.create({
        model: this.model,
        messages: openaiMessages(
          request.system,
          request.messages,
          (n) => providerName(adapted, n),
        ),
        stream: true,
        stream_options: { include_usage: true },
        ...(tools.length > 0 ? { tools } : {}),
        ...(tools.length > 0 && this.#parallel !== undefined
          ? { parallel_tool_calls: this.#parallel }
          : {}),
        ...maxTokensField(this.#settings, request.maxTokens),
        ...(this.#settings.reasoningEffort
          ? { reasoning_effort: this.#settings.reasoningEffort }
          : {}),
      }, { signal: watch.signal });
    } catch (error) {
      throw watch.openFailed(this.name, error);
    }
    let text = "";
    let refusal = "";
    let reasoning = "";
    let stop: string | undefined;
    let usage: TurnResult["usage"];
    const calls = new ToolCallAccumulator();
    watch.touch();
    try {
      for await (const raw of stream) {
        watch.touch();
        const chunk = raw as typeof raw & StreamExtras;
        // vLLM sends an error object in mid-stream instead of a chunk.
        if ((chunk as { object?: string }).object === "error") {
          throw providerError(this.name, {
            message: `the stream reported an error: ${chunk.message ?? "(no message)"}`,
          });
        }
        if (chunk.usage) usage = usageOf(chunk.usage, chunk.timings);
        else if (chunk.timings && usage) usage = usageOf(undefined, chunk.timings, usage);
        for (const choice of chunk.choices ?? []) {
          const delta = (choice.delta ?? {}) as typeof choice.delta & DeltaExtras;
          if (typeof delta.content === "string" && delta.content !== "") {
            text += delta.content;
            request.onText?.(delta.content);
          }
          if (typeof delta.refusal === "string") refusal += delta.refusal;
          const thought = delta.reasoning_content ?? delta.reasoning;
          if (typeof thought === "string" && thought !== "") {
            reasoning += thought;
            request.onReasoning?.(thought);
          }
          for (const tc of (delta.tool_calls ?? []) as ToolCallDelta[]) calls.push(tc);
          if (choice.finish_reason) stop = choice.finish_reason;
        }
      }
    } catch (error) {
      watch.stop();
      if (error instanceof ProviderError) throw error;
      if (request.signal?.aborted) throw error;
      if (watch.stalled) throw new StreamCutError(`no data for ${this.#idleMs / 1000} s`);
      // OpenRouter's `error` object in mid-stream arrives as an APIError without a status.
      if (error instanceof OpenAI.APIError && !(error instanceof OpenAI.APIConnectionError)) {
        throw streamError(this.name, error);
      }
      throw new StreamCutError(`the stream was cut: ${(error as Error).message}`);
    }
    watch.stop();
    if (request.signal?.aborted) throw new DOMException("The turn was cancelled", "AbortError");
    if (watch.stalled) throw new StreamCutError(`no data for ${this.#idleMs / 1000} s`);
    if (stop === undefined) throw new StreamCutError("the stream ended before the model finished");
    const tool_calls: ToolCallRequest[] = calls.calls().map((c) => ({
      ...c,
      name: registryName(adapted, c.name),
    }));
    return {
      text,
      tool_calls,
      usage,
      stop,
      ...(refusal ? { refusal } : {}),
      ...(reasoning ? { reasoning } : {}),
    };
  }

  serverWindow(): Promise<number | undefined> {
    return askServerWindow(this.#settings);
  }
}

/** Fields some servers add to a chunk beyond OpenAI's. */
interface StreamExtras {
  /** vLLM's mid-stream error: `{"object": "error", "message": …}`. */
  message?: string;
  /** llama.cpp's timings: `cache_n` prompt tokens came from its cache. */
  timings?: { cache_n?: number; prompt_n?: number };
}

/** Fields some servers add to a delta: llama.cpp/vLLM/DeepSeek `reasoning_content`, Ollama/OpenRouter `reasoning`. */
interface DeltaExtras {
  reasoning_content?: string | null;
  reasoning?: string | null;
  refusal?: string | null;
}

/** The usage of a chunk, with OpenAI's details and llama.cpp's cache count. */
function usageOf(
  u: OpenAI.CompletionUsage | undefined,
  timings: StreamExtras["timings"],
  base?: Usage,
): Usage {
  const out: Usage = base ? { ...base } : {
    input_tokens: u?.prompt_tokens ?? 0,
    output_tokens: u?.completion_tokens ?? 0,
  };
  const cached = u?.prompt_tokens_details?.cached_tokens ?? timings?.cache_n;
  if (typeof cached === "number" && cached > 0) out.cached_tokens = cached;
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoning_tokens = reasoning;
  return out;
}

/**
 * The field that bounds the answer: `max_completion_tokens` for api.openai.com (its
 * reasoning models refuse `max_tokens`), `max_tokens` for every other server (Ollama,
 * llama.cpp, vLLM, LM Studio, OpenRouter all read it).
 */
export function maxTokensField(
  settings: ProviderSettings,
  override?: number,
): { max_tokens: number } | { max_completion_tokens: number } {
  const n = override ?? settings.maxTokens;
  const host = settings.baseURL ? new URL(settings.baseURL).hostname : "api.openai.com";
  return host === "api.openai.com" ? { max_completion_tokens: n } : { max_tokens: n };
}
