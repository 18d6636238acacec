/**
 * Estimating a request's size in tokens before it is sent. No tokenizer fits every
 * provider (Claude's is not published; local models each have their own), so magi uses a
 * rule: **one token per 3.5 characters** of the request's text — system prompt, declarations
 * as JSON, and every message's text, tool-call arguments and results. English prose runs
 * near 4 characters a token and JSON or code near 3, so the rule errs towards compacting
 * early. Once a provider has reported the real `input_tokens` of a request, the meter uses
 * the ratio it measured (kept between 1.5 and 8 characters a token) for that session.
 *
 * @module
 */
import type { Declaration } from "../registry/types.ts";
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

/** Estimates tokens from characters, learning the ratio from the provider's reports. */
export class TokenMeter {
  #charsPerToken = DEFAULT_CHARS_PER_TOKEN;

  /** The ratio in use, characters per token. */
  get charsPerToken(): number {
    return this.#charsPerToken;
  }

  /** Tokens for `chars` characters of request. */
  tokens(chars: number): number {
    return Math.ceil(chars / this.#charsPerToken);
  }

  /** Tokens of a whole request. */
  request(system: string, tools: readonly Declaration[], messages: readonly Message[]): number {
    let chars = fixedChars(system, tools);
    for (const m of messages) chars += messageChars(m);
    return this.tokens(chars);
  }

  /**
   * The provider counted `inputTokens` for a request of `chars` characters: use its ratio
   * from now on (reports under 256 tokens say too little and are ignored).
   */
  observe(chars: number, inputTokens: number): void {
    if (!(inputTokens >= 256) || chars <= 0) return;
    this.#charsPerToken = Math.min(8, Math.max(1.5, chars / inputTokens));
  }
}
