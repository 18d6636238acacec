/**
 * Anthropic Messages with streaming, through the official `@anthropic-ai/sdk`: text and
 * `tool_use` blocks, `input_json_delta` fragments gathered per block, `tool_result` blocks
 * with `is_error`, and `ping` events (skipped) anywhere in the stream.
 *
 * @module
 */
import { anthropicImageBlocks } from "./images.ts";
import Anthropic from "@anthropic-ai/sdk";
import { adaptTools, providerName, registryName } from "./adapt.ts";
import {
  type Message,
  type Provider,
  type ProviderSettings,
  StreamCutError,
  streamError,
  StreamWatch,
  type ThinkingBlock,
  type ToolCallRequest,
  type TurnRequest,
  type TurnResult,
  type Usage,
} from "./provider.ts";

type Block = Record<string, unknown>;
/** A Messages API message as sent. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

function parseInput(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text || "{}");
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The prompt-cache marker (Anthropic's only kind: five minutes, refreshed on each hit). */
const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Puts `cache_control` on the last block of the newest message and of the user message
 * before it (the previous request's end, whose cache this request reads): two of the four
 * breakpoints Anthropic allows (the declarations and the system prompt take the others).
 * Thinking blocks cannot carry one, so only user messages are marked.
 */
export function markLatestTurns(messages: AnthropicMessage[], count = 2): void {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < count; i--) {
    const m = messages[i];
    if (m.role !== "user" || m.content.length === 0) continue;
    const last = m.content[m.content.length - 1];
    m.content[m.content.length - 1] = { ...last, cache_control: EPHEMERAL };
    marked++;
  }
}

/**
 * Builds the Messages API `messages`: tool results become `tool_result` blocks in a user
 * message, and consecutive messages of one role are merged (the API wants them to alternate).
 * With `thinking`, an answer's thinking blocks go back first in its message, unchanged with
 * their signatures (the API requires them before the tool results that follow).
 */
export function anthropicMessages(
  messages: readonly Message[],
  name: (registry: string) => string,
  thinking = false,
): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const add = (role: "user" | "assistant", blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === "user") add("user", [{ type: "text", text: m.text || " " }]);
    else if (m.role === "tool") {
      add("user", [{
        type: "tool_result",
        tool_use_id: m.result.id,
        content: m.result.images?.length
          ? [
            { type: "text", text: m.result.said || "(no output)" },
            ...anthropicImageBlocks(m.result.images),
          ]
          : m.result.said === ""
          ? "(no output)"
          : m.result.said,
        ...(m.result.is_error ? { is_error: true } : {}),
      }]);
    } else {
      const blocks: Block[] = thinking ? (m.thinking ?? []).map((b) => ({ ...b })) : [];
      if (m.text !== "") blocks.push({ type: "text", text: m.text });
      for (const c of m.tool_calls) {
        blocks.push({
          type: "tool_use",
          id: c.id,
          name: name(c.name),
          input: parseInput(c.arguments),
        });
      }
      add("assistant", blocks);
    }
  }
  return out;
}

/** A provider speaking Anthropic Messages. */
/**
 * Error types of an `event: error` mid-stream that a new attempt may not meet (Anthropic's
 * "Errors" reference: 529 overloaded_error, 500 api_error).
 */
const TRANSIENT_STREAM_ERRORS = new Set(["overloaded_error", "api_error"]);

export class AnthropicProvider implements Provider {
  readonly name: string;
  readonly model: string;
  readonly #idleMs: number;
  readonly #client: Anthropic;
  readonly #maxTokens: number;
  readonly #thinkingBudget: number | undefined;

  constructor(settings: ProviderSettings) {
    this.name = settings.name;
    this.model = settings.model;
    this.#idleMs = settings.timeoutMs;
    this.#maxTokens = settings.maxTokens;
    this.#thinkingBudget = settings.thinkingBudget;
    this.#client = new Anthropic({
      apiKey: settings.apiKey || "no-key",
      authToken: null,
      baseURL: settings.baseURL ?? "https://api.anthropic.com",
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      ...(settings.fetch ? { fetch: settings.fetch } : {}),
      logLevel: "off",
    });
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const adapted = adaptTools(request.tools);
    const watch = new StreamWatch(this.#idleMs, request.signal);
    // Thinking needs max_tokens above its budget; a request asking for less (a summary)
    // goes without it.
    const maxTokens = request.maxTokens ?? this.#maxTokens;
    const budget = this.#thinkingBudget;
    const thinking = budget !== undefined && request.maxTokens === undefined;
    const messages = anthropicMessages(request.messages, (n) => providerName(adapted, n), thinking);
    markLatestTurns(messages);
    const tools = adapted.tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: t.parameters as Anthropic.Tool.InputSchema,
      ...(i === adapted.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
    let stream;
    try {
      stream = await this.#client.messages.create({
        model: this.model,
        max_tokens: thinking ? Math.max(maxTokens, budget + 1024) : maxTokens,
        ...(thinking ? { thinking: { type: "enabled" as const, budget_tokens: budget } } : {}),
        ...(request.system
          ? { system: [{ type: "text" as const, text: request.system, cache_control: EPHEMERAL }] }
          : {}),
        messages: messages as unknown as Anthropic.MessageParam[],
        ...(tools.length > 0 ? { tools } : {}),
        stream: true,
      }, { signal: watch.signal });
    } catch (error) {
      throw watch.openFailed(this.name, error);
    }
    let text = "";
    let reasoning = "";
    let stop: string | undefined;
    let finished = false;
    const usage: Usage = { input_tokens: 0, output_tokens: 0 };
    const blocks = new Map<number, { id: string; name: string; json: string; start: string }>();
    const thoughts = new Map<number, ThinkingBlock>();
    const order: number[] = [];
    watch.touch();
    try {
      for await (const event of stream) {
        watch.touch();
        switch (event.type) {
          case "message_start":
            takeUsage(usage, event.message.usage);
            break;
          case "content_block_start": {
            const block = event.content_block;
            if (block.type === "tool_use") {
              const start = block.input && Object.keys(block.input).length > 0
                ? JSON.stringify(block.input)
                : "";
              blocks.set(event.index, { id: block.id, name: block.name, json: "", start });
              order.push(event.index);
            } else if (block.type === "text" && block.text) {
              text += block.text;
              request.onText?.(block.text);
            } else if (block.type === "thinking") {
              thoughts.set(event.index, {
                type: "thinking",
                thinking: block.thinking ?? "",
                signature: block.signature ?? "",
              });
              order.push(event.index);
            } else if (block.type === "redacted_thinking") {
              thoughts.set(event.index, { type: "redacted_thinking", data: block.data ?? "" });
              order.push(event.index);
            }
            break;
          }
          case "content_block_delta": {
            const delta = event.delta;
            if (delta.type === "text_delta") {
              text += delta.text;
              request.onText?.(delta.text);
            } else if (delta.type === "input_json_delta") {
              const block = blocks.get(event.index);
              if (block) block.json += delta.partial_json;
            } else if (delta.type === "thinking_delta") {
              const block = thoughts.get(event.index);
              if (block?.type === "thinking" && delta.thinking) {
                block.thinking += delta.thinking;
                reasoning += delta.thinking;
                request.onReasoning?.(delta.thinking);
              }
            } else if (delta.type === "signature_delta") {
              const block = thoughts.get(event.index);
              if (block?.type === "thinking") block.signature += delta.signature;
            }
            break;
          }
          case "message_delta":
            if (event.delta.stop_reason) stop = event.delta.stop_reason;
            takeUsage(usage, event.usage as Partial<Anthropic.Usage> | undefined);
            break;
          case "message_stop":
            finished = true;
            break;
        }
      }
    } catch (error) {
      watch.stop();
      if (request.signal?.aborted) throw error;
      if (watch.stalled) throw new StreamCutError(`no data for ${this.#idleMs / 1000} s`);
      // An `error` event mid-stream has no HTTP status; an overloaded or internal error there
      // is as passing as a 529 or a 500 before the stream, so the turn is tried again.
      if (
        error instanceof Anthropic.APIError && error.status === undefined &&
        TRANSIENT_STREAM_ERRORS.has(String((error as { type?: unknown }).type))
      ) {
        throw new StreamCutError(`the stream reported ${(error as { type?: unknown }).type}`);
      }
      if (
        error instanceof Anthropic.APIError && !(error instanceof Anthropic.APIConnectionError)
      ) {
        throw streamError(this.name, error);
      }
      throw new StreamCutError(`the stream was cut: ${(error as Error).message}`);
    }
    watch.stop();
    if (request.signal?.aborted) throw new DOMException("The turn was cancelled", "AbortError");
    if (watch.stalled) throw new StreamCutError(`no data for ${this.#idleMs / 1000} s`);
    if (!finished) throw new StreamCutError("the stream ended before the model finished");
    const tool_calls: ToolCallRequest[] = order.flatMap((i) => {
      const b = blocks.get(i);
      if (!b) return [];
      return [{
        id: b.id,
        name: registryName(adapted, b.name),
        arguments: b.json || b.start || "{}",
      }];
    });
    const thinkingBlocks = order.flatMap((i) => thoughts.has(i) ? [thoughts.get(i)!] : []);
    return {
      text,
      tool_calls,
      usage,
      stop: stop ?? "end_turn",
      ...(reasoning ? { reasoning } : {}),
      ...(thinkingBlocks.length > 0 ? { thinking: thinkingBlocks } : {}),
    };
  }
}

/**
 * Takes Anthropic's counts into {@link Usage}: its `input_tokens` leaves out what was read
 * from or written to the cache, so the whole prompt is their sum. Counts a later event does
 * not carry are kept.
 */
function takeUsage(usage: Usage, u: Partial<Anthropic.Usage> | null | undefined): void {
  if (!u) return;
  const read = u.cache_read_input_tokens ?? usage.cached_tokens ?? 0;
  const write = u.cache_creation_input_tokens ?? usage.cache_write_tokens ?? 0;
  if (typeof u.input_tokens === "number") usage.input_tokens = u.input_tokens + read + write;
  if (typeof u.output_tokens === "number" && u.output_tokens > 0) {
    usage.output_tokens = u.output_tokens;
  }
  if (read > 0) usage.cached_tokens = read;
  if (write > 0) usage.cache_write_tokens = write;
  const thinking = (u as { output_tokens_details?: { thinking_tokens?: number } })
    .output_tokens_details?.thinking_tokens;
  if (typeof thinking === "number" && thinking > 0) usage.reasoning_tokens = thinking;
}
