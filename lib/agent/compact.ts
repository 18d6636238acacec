/**
 * Keeping a session inside its context window (SPEC S7.5). Before each request the
 * conversation is measured ({@link TokenMeter}); when it would pass `compactAt` of the
 * window (default 80 %):
 *
 * 1. **prune**: tool results older than the newest part (about a quarter of the window)
 *    are cut to their head and a note; the whole of each is written to
 *    `<session>/spill/pruned-<id>.txt` first. A `prune` event records the step.
 * 2. **summarise**, if still above: the model is sent the same system prompt,
 *    declarations and older messages (so the provider's prompt cache still hits), then
 *    {@link SUMMARY_PROMPT}; its answer replaces the older part, as a `compaction` event
 *    (masked like every event). If that request fails, a plain list of what the person
 *    asked and which tools ran stands in for the summary.
 *
 * The kept part always starts at a user message or an answer, never at a tool result, so
 * tool calls and their results stay paired for every provider. Between steps the messages
 * sent only grow at their end: consecutive requests share a byte-identical prefix.
 *
 * @module
 */
import type { Declaration } from "../core/types.ts";
import { privateDir, writePrivateFile } from "../core/private.ts";
import {
  prunable,
  prunedPath,
  pruneMessages,
  safeSplit,
  SUMMARY_HEADING,
  summaryMessage,
} from "./history.ts";
import { type Message, type Provider, ProviderError } from "./provider.ts";
import type { Session } from "./session.ts";
import { messageChars, tokenizerFor, TokenMeter } from "./tokens.ts";
import { contextWindow } from "./window.ts";
import { dirname } from "node:path";

/** Compact when a request would pass this share of the window, unless configured. */
export const DEFAULT_COMPACT_AT = 0.8;

/** The newest part kept whole when pruning or summarising: this share of the window. */
export const KEEP_SHARE = 0.25;

/** The longest summary asked for, in tokens. */
export const SUMMARY_MAX_TOKENS = 2048;

/**
 * The instruction that ends a summary request. Documented in the README; changing it
 * changes what a compacted session remembers.
 */
export const SUMMARY_PROMPT = [
  "[magi: the conversation is about to be compacted to fit the context window.",
  "Do not call any tool. Write a summary of the conversation so far that lets you go on",
  "with the work without it: the person's requests and constraints, decisions made, what",
  "was done and found (files, commands, results that matter, errors), what is still to do,",
  "and anything you promised. Be concrete and brief: names, paths and numbers over prose.]",
].join(" ");

/** How the context is kept: from config `providers.NAME`. */
export interface ContextSettings {
  /** The window in tokens from config; else the server's, else a known default. */
  window?: number;
  /** Share of the window that starts compaction (0.1 to 0.95). */
  compactAt?: number;
}

/** What a step did, for the person (`view.note`). */
export type CompactionNote = (message: string) => void;

/** Keeps one session within its window while the loop runs. */
export class ContextKeeper {
  readonly meter = new TokenMeter();
  readonly #provider: Provider;
  readonly #session: Session;
  readonly #system: string;
  readonly #tools: readonly Declaration[];
  readonly #compactAt: number;
  readonly #note: CompactionNote;
  #window = 0;
  readonly #configured: number | undefined;

  constructor(opts: {
    provider: Provider;
    session: Session;
    system: string;
    tools: readonly Declaration[];
    settings?: ContextSettings;
    note?: CompactionNote;
  }) {
    this.#provider = opts.provider;
    this.#session = opts.session;
    this.#system = opts.system;
    this.#tools = opts.tools;
    this.#compactAt = opts.settings?.compactAt ?? DEFAULT_COMPACT_AT;
    this.#configured = opts.settings?.window;
    this.#note = opts.note ?? (() => {});
  }

  /** The window in tokens (after {@link ContextKeeper.start}). */
  get window(): number {
    return this.#window;
  }

  /** Resolves the window (asking the server where configured). */
  async start(): Promise<void> {
    this.#window = await contextWindow(this.#provider, this.#configured);
    this.meter.useTokenizer(await tokenizerFor(this.#provider.model));
  }

  /** The estimated tokens of a request carrying `messages`. */
  estimate(messages: readonly Message[]): number {
    return this.meter.request(this.#system, this.#tools, messages);
  }

  /** The characters of a request carrying `messages` (for {@link TokenMeter.observe}). */
  chars(messages: readonly Message[]): number {
    return this.#system.length + JSON.stringify(this.#tools).length +
      messages.reduce((n, m) => n + messageChars(m), 0);
  }

  /**
   * Prunes and, if still needed, summarises, so that the next request stays under the
   * threshold. With `force` (the provider said the prompt is too long), both steps run
   * whatever the estimate, keeping only the newest exchange whole. Returns whether the
   * conversation changed.
   */
  async fit(signal?: AbortSignal, force = false): Promise<boolean> {
    const limit = this.#window * this.#compactAt;
    let messages = this.#session.messages();
    const before = this.estimate(messages);
    if (!force && before <= limit) return false;
    const keep = force ? 0 : this.#window * KEEP_SHARE;
    const upto = this.#tailStart(messages, keep, false);
    if (upto > 0 && messages.slice(0, upto).some((m) => m.role === "tool" && prunable(m.result))) {
      this.#spillWhole(messages.slice(0, upto));
      const pruned = [...messages];
      pruneMessages(pruned, upto, this.#session.dir);
      const after = this.estimate(pruned);
      this.#session.append({ type: "prune", upto, tokens_before: before, tokens_after: after });
      messages = pruned;
      this.#note(`magi: pruned older tool results: about ${before} → ${after} tokens`);
      if (!force && after <= limit) return true;
      await this.summarise({ trigger: force ? "context_length" : "threshold", signal, keep });
      return true;
    }
    return await this.summarise({ trigger: force ? "context_length" : "threshold", signal, keep });
  }

  /**
   * Summarises all but the newest part (`keep` tokens; 0 keeps only the newest exchange)
   * into a `compaction` event. `/compact [focus]` calls this with `trigger: "command"`.
   * Returns false when there is nothing old enough to summarise.
   */
  async summarise(opts: {
    trigger: string;
    focus?: string;
    signal?: AbortSignal;
    keep?: number;
  }): Promise<boolean> {
    const messages = this.#session.messages();
    const before = this.estimate(messages);
    const split = this.#tailStart(messages, opts.keep ?? 0, true);
    if (split <= 0) return false;
    const older = messages.slice(0, split);
    const focus = opts.focus?.trim();
    let summary: string;
    try {
      const result = await this.#provider.turn({
        system: this.#system,
        messages: [...older, {
          role: "user",
          text: SUMMARY_PROMPT + (focus ? `\n\nFocus the summary on: ${focus}` : ""),
        }],
        tools: [...this.#tools],
        signal: opts.signal,
        maxTokens: SUMMARY_MAX_TOKENS,
      });
      summary = result.text.trim();
      if (summary === "") throw new ProviderError("the summary came back empty");
    } catch (error) {
      if (opts.signal?.aborted) throw error;
      this.#note(
        `magi: the model could not summarise (${(error as Error).message}); ` +
          "the older part is replaced by a list of its requests and tool calls",
      );
      summary = plainSummary(older);
    }
    const after = this.estimate([summaryMessage(summary), ...messages.slice(split)]);
    this.#session.append({
      type: "compaction",
      summary,
      kept: messages.length - split,
      trigger: opts.trigger,
      ...(focus ? { focus } : {}),
      tokens_before: before,
      tokens_after: after,
    });
    this.#note(`magi: compacted the conversation: about ${before} → ${after} tokens`);
    return true;
  }

  /**
   * Where the newest part holding at most `keep` tokens starts: a safe split (never at a
   * tool result). The newest exchange — the last user message or answer and what follows
   * it — is always kept. With `summary`, the first message is never a split of its own
   * when it is already a summary and nothing else is older.
   */
  #tailStart(messages: readonly Message[], keep: number, summary: boolean): number {
    let tokens = 0;
    let start = messages.length;
    let newest = -1;
    for (let i = messages.length - 1; i > 0; i--) {
      tokens += this.meter.message(messages[i]);
      if (!safeSplit(messages, i)) continue;
      if (newest < 0) {
        newest = i;
        start = i;
        continue;
      }
      if (tokens > keep) break;
      start = i;
    }
    if (newest < 0) return 0;
    if (summary && start === 1 && isSummary(messages[0])) return 0;
    return start;
  }

  /** Writes the whole of each result about to be pruned next to the session's spills. */
  #spillWhole(messages: readonly Message[]): void {
    for (const m of messages) {
      if (m.role !== "tool" || !prunable(m.result)) continue;
      const path = prunedPath(this.#session.dir, m.result.id);
      try {
        Deno.statSync(path);
        continue;
      } catch { /* not written yet */ }
      privateDir(dirname(path));
      writePrivateFile(path, m.result.said);
    }
  }
}

function isSummary(m: Message): boolean {
  return m.role === "user" && m.text.startsWith(SUMMARY_HEADING);
}

/** A stand-in summary when the model cannot give one: the requests and the tools used. */
export function plainSummary(messages: readonly Message[]): string {
  const lines: string[] = ["(made by magi, not the model: the model could not summarise)"];
  for (const m of messages) {
    if (m.role === "user") {
      const flat = m.text.replace(/\s+/g, " ").trim();
      lines.push(`- the person: ${flat.length > 300 ? flat.slice(0, 299) + "…" : flat}`);
    } else if (m.role === "assistant" && m.tool_calls.length > 0) {
      lines.push(`- tools called: ${m.tool_calls.map((c) => c.name).join(", ")}`);
    }
  }
  return lines.join("\n");
}

/**
 * `/compact [focus]`: summarises the conversation now, keeping only the newest exchange
 * whole, with the person's focus for the summary. Steps are told through `note`. Returns
 * false when there was nothing old enough to summarise.
 */
export async function compactNow(opts: {
  provider: Provider;
  session: Session;
  system: string;
  tools: readonly Declaration[];
  settings?: ContextSettings;
  focus?: string;
  signal?: AbortSignal;
  note?: CompactionNote;
}): Promise<boolean> {
  const keeper = new ContextKeeper(opts);
  await keeper.start();
  return await keeper.summarise({ trigger: "command", focus: opts.focus, signal: opts.signal });
}
