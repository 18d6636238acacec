/**
 * Estimating a request's size in tokens before it is sent. For OpenAI's models (`gpt-*`,
 * `o1`/`o3`/`o4`) the `gpt-tokenizer` package counts with OpenAI's own `o200k_base`
 * encoding (loaded on first use), plus 4 tokens a message. No tokenizer fits the other
 * providers (Claude's is not published; local models each have their own), so for them magi
 * uses a rule: **one token per 3.5 characters** of the request's text — system prompt,
 * declarations as JSON, and every message's text, tool-call arguments and results. English
 * prose runs near 4 characters a token and JSON or code near 3, so the rule errs towards
 * compacting early. Once a provider has reported the real `input_tokens` of a request, the
 * rule uses the ratio it measured (kept between 1.5 and 8 characters a token) for that
 * session.
 *
 * @module
 */
import type { Declaration } from "../core/types.ts";
import type { Message } from "./provider.ts";

/** Characters per token before any provider has reported a count. */
export const DEFAULT_CHARS_PER_TOKEN = 3.5;

/** The characters a message puts in a request (its text, call arguments and result). */
export function messageChars(m: Message): number {
  if (m.role === "user") return m.text.length + 8;
  if (m.role === "tool") return m.result.said.length + m.result.id.length + 16;
  let n = m.text.length + 8;
  for (const c of m.tool_calls) n += c.name.length + c.arguments.length + c.id.length + 24;
  for (const t of m.thinking ?? []) n += t.type === "thinking" ? t.thinking.length : 0;
  return n;
}

/** The characters of the fixed part: system prompt and declarations. */
export function fixedChars(system: string, tools: readonly Declaration[]): number {
  return system.length + JSON.stringify(tools).length;
}

/** Counts the tokens of a text. */
export type Counter = (text: string) => number;

/** Models counted with `o200k_base` (GPT-4o and later; close for older GPT-4 models). */
export const OPENAI_MODELS = /(^|\/)(gpt-|o[134](-|$)|chatgpt-)/i;

/** Tokens a message costs beyond its text (role and separators). */
const MESSAGE_OVERHEAD = 4;

/**
 * The tokenizer for a model, when one fits (OpenAI's models); undefined otherwise, or when
 * it cannot be loaded. Counts are remembered per text.
 */
export async function tokenizerFor(model: string): Promise<Counter | undefined> {
  if (!OPENAI_MODELS.test(model)) return undefined;
  try {
    const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
    const memo = new Map<string, number>();
    return (text) => {
      if (text.length < 64) return Math.ceil(text.length / DEFAULT_CHARS_PER_TOKEN);
      let n = memo.get(text);
      if (n === undefined) {
        if (memo.size > 4096) memo.clear();
        n = countTokens(text);
        memo.set(text, n);
      }
      return n;
    };
  } catch {
    return undefined;
  }
}

/**
 * Estimates tokens: with a model's tokenizer where one fits, else from characters,
 * learning the ratio from the provider's reports.
 */
export class TokenMeter {
  #charsPerToken = DEFAULT_CHARS_PER_TOKEN;
  #counter: Counter | undefined;

  /** Counts with this tokenizer from now on. */
  useTokenizer(counter: Counter | undefined): void {
    this.#counter = counter;
  }

  /** Whether a tokenizer counts (not the characters rule). */
  get counting(): boolean {
    return this.#counter !== undefined;
  }

  /** The ratio in use, characters per token. */
  get charsPerToken(): number {
    return this.#charsPerToken;
  }

  /** Tokens for `chars` characters of request. */
  tokens(chars: number): number {
    return Math.ceil(chars / this.#charsPerToken);
  }

  /** Tokens of one message. */
  message(m: Message): number {
    const count = this.#counter;
    if (!count) return this.tokens(messageChars(m));
    if (m.role === "user") return count(m.text) + MESSAGE_OVERHEAD;
    if (m.role === "tool") return count(m.result.said) + MESSAGE_OVERHEAD + 8;
    let n = count(m.text) + MESSAGE_OVERHEAD;
    for (const c of m.tool_calls) n += count(c.arguments) + this.tokens(c.name.length + 24);
    return n;
  }

  /** Tokens of a whole request. */
  request(system: string, tools: readonly Declaration[], messages: readonly Message[]): number {
    const count = this.#counter;
    let n = count
      ? count(system) + count(JSON.stringify(tools))
      : this.tokens(fixedChars(system, tools));
    for (const m of messages) n += this.message(m);
    return n;
  }

  /**
   * The provider counted `inputTokens` for a request of `chars` characters: use its ratio
   * from now on (reports under 256 tokens say too little and are ignored).
   */
  observe(chars: number, inputTokens: number): void {
    if (this.#counter || !(inputTokens >= 256) || chars <= 0) return;
    this.#charsPerToken = Math.min(8, Math.max(1.5, chars / inputTokens));
  }
}
