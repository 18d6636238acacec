/**
 * An MCP server's `sampling/createMessage` (SPEC S9): the server asks magi's model for a
 * completion. It is answered only where a person can be asked and a model is at hand —
 * `magi chat`, which sets a {@link SamplingHost} for as long as it runs: the person is asked
 * first (never the model, never `--auto`), then the request goes to the session's provider as
 * one turn without tools. Elsewhere the request is refused with a line saying why: a command
 * sets that line with {@link setMcpSampling} (`magi run`, `--auto`); without one the command
 * has no model (`magi tools`, `magi call`). `magi mcp` passes the request on to its own
 * client when that client declared sampling (lib/sources/mcp/client.ts, `Relay`) and refuses it
 * otherwise. What is asked and what is answered is masked.
 *
 * @module
 */
import type { Question } from "../../core/types.ts";

/** What masks the text that crosses (the runtime's masker). */
export interface TextMasker {
  maskText(text: string): string;
}

/** One message of a sampling request: its role and its text (other content is named). */
export interface SamplingTurnMessage {
  role: "user" | "assistant";
  text: string;
}

/** What a {@link SamplingHost} completes: the request with its content as text. */
export interface SamplingTurn {
  system: string;
  messages: SamplingTurnMessage[];
  /** The most tokens the server wants back. */
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Where sampling is answered: the person's question channel and the session's model. */
export interface SamplingHost {
  /** Asks the person (the question is masked already); undefined when no answer came. */
  ask: (question: Question) => Promise<string | undefined>;
  /**
   * One completion of the session's model.
   *
   * @throws Error when the provider fails
   */
  complete: (turn: SamplingTurn) => Promise<{ text: string; model: string; stop: string }>;
}

/** Why sampling is refused when no command said otherwise. */
export const NO_MODEL = "this magi command has no model to answer it (only `magi chat` answers " +
  "sampling/createMessage, after asking you, and `magi mcp` passes it to a client that " +
  "declared sampling)";

let host: SamplingHost | string = NO_MODEL;

/**
 * Sets what answers MCP servers' sampling requests: a host, or the reason they are refused.
 *
 * @returns the function that puts back what was set before
 */
export function setMcpSampling(next: SamplingHost | string): () => void {
  const before = host;
  host = next;
  return () => void (host = before);
}

/** A sampling request's params, as much of them as magi reads (MCP 2025-11-25). */
export interface SamplingParams {
  messages: { role: "user" | "assistant"; content: unknown }[];
  systemPrompt?: string;
  maxTokens?: number;
}

/** The text of a message's content (a block or, since 2025-11-25, a list of them). */
function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((b) => {
    const block = (b ?? {}) as { type?: string; text?: unknown };
    return block.type === "text" && typeof block.text === "string"
      ? block.text
      : `[${block.type ?? "unknown"} content left out]`;
  }).join("\n");
}

/** At most `n` characters of `text`, on one line. */
function brief(text: string, n: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > n ? `${line.slice(0, n - 1)}…` : line;
}

/** What a sampling request is answered with: the model's text as one assistant message. */
export interface SamplingAnswer {
  role: "assistant";
  content: { type: "text"; text: string };
  model: string;
  stopReason: string;
}

/**
 * Answers server `server`'s sampling request, or refuses it.
 *
 * @throws Error with one line saying why, when it is refused (no host, the person said no or
 *   did not answer) or the model failed
 */
export async function answerSampling(
  server: string,
  params: SamplingParams,
  masker: TextMasker,
  signal?: AbortSignal,
): Promise<SamplingAnswer> {
  const current = host;
  if (typeof current === "string") {
    throw new Error(`MCP server "${server}" asked to use the model; refused: ${current}`);
  }
  const messages = params.messages.map((m) => ({
    role: m.role === "assistant" ? "assistant" as const : "user" as const,
    text: masker.maskText(textOf(m.content)),
  }));
  const last = messages.at(-1)?.text ?? "";
  const question = masker.maskText(
    `MCP server "${server}" asks to use the model` +
      (params.maxTokens ? ` (at most ${params.maxTokens} tokens)` : "") +
      (params.systemPrompt ? `, as "${brief(params.systemPrompt, 120)}"` : "") +
      `: "${brief(last, 300)}"${messages.length > 1 ? ` (${messages.length} messages)` : ""}. ` +
      "Send it?",
  );
  const answer = await current.ask({ question, choices: ["yes", "no"] });
  if (answer !== "yes") {
    throw new Error(
      `MCP server "${server}" asked to use the model; ${
        answer === undefined ? "no answer came" : "the person declined"
      }`,
    );
  }
  const done = await current.complete({
    system: masker.maskText(params.systemPrompt ?? ""),
    messages,
    ...(params.maxTokens ? { maxTokens: params.maxTokens } : {}),
    ...(signal ? { signal } : {}),
  });
  return {
    role: "assistant",
    content: { type: "text", text: masker.maskText(done.text) },
    model: done.model,
    stopReason: /length|max_tokens/.test(done.stop) ? "maxTokens" : "endTurn",
  };
}
