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
  describeError,
  type Message,
  type Provider,
  ProviderError,
  type ProviderSettings,
  StreamCutError,
  StreamWatch,
  type ToolCallRequest,
  type TurnRequest,
  type TurnResult,
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

/**
 * Builds the Messages API `messages`: tool results become `tool_result` blocks in a user
 * message, and consecutive messages of one role are merged (the API wants them to alternate).
 */
export function anthropicMessages(
  messages: readonly Message[],
  name: (registry: string) => string,
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
      const blocks: Block[] = m.text === "" ? [] : [{ type: "text", text: m.text }];
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

  constructor(settings: ProviderSettings) {
    this.name = settings.name;
    this.model = settings.model;
    this.#idleMs = settings.timeoutMs;
    this.#maxTokens = settings.maxTokens;
    this.#client = new Anthropic({
      apiKey: settings.apiKey || "no-key",
      authToken: null,
      baseURL: settings.baseURL ?? "https://api.anthropic.com",
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      logLevel: "off",
    });
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const adapted = adaptTools(request.tools);
    const watch = new StreamWatch(this.#idleMs, request.signal);
    let stream;
    try {
      stream = await this.#client.messages.create({
        model: this.model,
        max_tokens: this.#maxTokens,
        ...(request.system ? { system: request.system } : {}),
        messages: anthropicMessages(
          request.messages,
          (n) => providerName(adapted, n),
        ) as unknown as Anthropic.MessageParam[],
        ...(adapted.tools.length > 0
          ? {
            tools: adapted.tools.map((t) => ({
              name: t.name,
              description: t.description,
              input_schema: t.parameters as Anthropic.Tool.InputSchema,
            })),
          }
          : {}),
        stream: true,
      }, { signal: watch.signal });
    } catch (error) {
      watch.stop();
      if (request.signal?.aborted) throw error;
      throw new ProviderError(describeError(this.name, error));
    }
    let text = "";
    let stop: string | undefined;
    let finished = false;
    const usage = { input_tokens: 0, output_tokens: 0 };
    const blocks = new Map<number, { id: string; name: string; json: string; start: string }>();
    const order: number[] = [];
    watch.touch();
    try {
      for await (const event of stream) {
        watch.touch();
        switch (event.type) {
          case "message_start":
            usage.input_tokens = event.message.usage?.input_tokens ?? 0;
            usage.output_tokens = event.message.usage?.output_tokens ?? 0;
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
            }
            break;
          }
          case "message_delta":
            if (event.delta.stop_reason) stop = event.delta.stop_reason;
            if (event.usage?.output_tokens) usage.output_tokens = event.usage.output_tokens;
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
        throw new ProviderError(describeError(this.name, error));
      }
      throw new StreamCutError(`the stream was cut: ${(error as Error).message}`);
    }
    watch.stop();
    if (request.signal?.aborted) throw new DOMException("The turn was cancelled", "AbortError");
    if (watch.stalled) throw new StreamCutError(`no data for ${this.#idleMs / 1000} s`);
    if (!finished) throw new StreamCutError("the stream ended before the model finished");
    const tool_calls: ToolCallRequest[] = order.map((i) => {
      const b = blocks.get(i)!;
      return {
        id: b.id,
        name: registryName(adapted, b.name),
        arguments: b.json || b.start || "{}",
      };
    });
    return { text, tool_calls, usage, stop: stop ?? "end_turn" };
  }
}
