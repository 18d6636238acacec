/**
 * Sessions (SPEC S7.3): each a folder under the sessions dir holding `transcript.jsonl`
 * (append-only, one event per line, fsynced per event), `context.md` (a readable mirror of
 * the conversation, given to tools as MAGI_CONTEXT_PATH), `spill/`, `attach/` and `images/`
 * (tool results' images, magi's own: lib/agent/images.ts). Every string of an event is masked
 * before it is written, so no credential value reaches the disk; the transcript holds what the
 * model read (`said`), never `shown`.
 *
 * @module
 */
import { type ImageRef, sessionImages } from "./images.ts";
import { join } from "node:path";
import type { Masker } from "../pipeline/mask.ts";
import { openPrivateAppend, privateDir } from "../core/private.ts";
import type { Warn } from "../core/types.ts";
import type { Message, ThinkingBlock, ToolCallRequest, Usage } from "./provider.ts";
import { pruneMessages, summaryMessage } from "./history.ts";
import { magiDir } from "../core/xdg.ts";

/**
 * One line of a transcript. `at` is an ISO 8601 time. Fields added later are optional, so
 * older transcripts stay readable.
 */
export type SessionEvent =
  | {
    type: "session";
    v: 1;
    id: string;
    at: string;
    cwd: string;
    provider: string;
    model: string;
    /** A sub-agent's: the parent session's id (MAGI_PARENT). */
    parent?: string;
  }
  // `from`: mail delivered at a turn (lib/agent/subagents/mailbox.ts), from a sub-agent or a tool.
  | { type: "user"; at: string; text: string; from?: string }
  // A sub-agent this session started (lib/agents/): its session, how it ended, its tokens.
  | {
    type: "sub_agent";
    at: string;
    id: string;
    /** The task it was given (its first 200 characters). */
    task: string;
    reason: string;
    input_tokens: number;
    output_tokens: number;
  }
  | {
    type: "assistant";
    at: string;
    text: string;
    tool_calls: ToolCallRequest[];
    /** The provider's stop reason ("stop", "length", "refusal", …). */
    stop?: string;
    /** The model's reasoning as shown to the person; never sent back as said. */
    reasoning?: string;
    /** Anthropic thinking blocks with their signatures, sent back with this answer. */
    thinking?: ThinkingBlock[];
    // terminal (#18): the person stopped this answer mid-stream (Ctrl-C); `text` is partial.
    interrupted?: true;
  }
  | {
    type: "tool_result";
    at: string;
    id: string;
    name: string;
    said: string;
    is_error: boolean;
    // Images sent with the result: files in images/ and their SHA-256 (lib/agent/images.ts).
    images?: ImageRef[];
  }
  // What the provider reported for one request; `estimated_tokens` is magi's estimate of the
  // request before it was sent (lib/agent/tokens.ts).
  | ({ type: "usage"; at: string } & Usage)
  // From here on, the tool results among the first `upto` messages are read pruned
  // (lib/agent/history.ts); `tokens_before`/`tokens_after` are estimates.
  | { type: "prune"; at: string; upto: number; tokens_before: number; tokens_after: number }
  // From here on, all messages but the last `kept` are read as this summary.
  | {
    type: "compaction";
    at: string;
    summary: string;
    kept: number;
    /** What asked for it: "threshold", "context_length" (the provider refused), "command". */
    trigger: string;
    focus?: string;
    tokens_before: number;
    tokens_after: number;
  }
  // A tool's request on the approvals socket and its answer (lib/policy/approvals.ts).
  | {
    type: "approval";
    at: string;
    ask: string;
    tool?: string;
    approved: boolean;
    by: string;
    reason: string;
  }
  | { type: "end"; at: string; reason: string };

/** Distributes Omit over the event union. */
export type NewEvent = SessionEvent extends infer E ? E extends SessionEvent ? Omit<E, "at">
  : never
  : never;

/** Appended, for the model, to an answer the person interrupted (terminal, #18). */
export const INTERRUPTED_NOTE =
  "[magi: the person interrupted this answer here (Ctrl-C); it was not finished]";

const TRANSCRIPT = "transcript.jsonl";
const MIRROR = "context.md";

/** The default sessions dir: `$XDG_STATE_HOME/magi/sessions` (`~/.local/state/…`). */
export function defaultSessionsDir(env: Record<string, string>): string {
  return join(magiDir(env, "state", env.HOME ?? Deno.cwd()), "sessions");
}

function newId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${crypto.randomUUID().slice(0, 6)}`;
}

function maskDeep<T>(masker: Masker, value: T): T {
  if (typeof value === "string") return masker.maskText(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(masker, v)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskDeep(masker, v);
    return out as T;
  }
  return value;
}

/** An open session: its folder, its events so far, and appending more. */
export class Session {
  readonly id: string;
  readonly dir: string;
  readonly events: SessionEvent[];
  readonly #masker: Masker;
  readonly #file: Deno.FsFile;
  readonly #mirror: Deno.FsFile;

  private constructor(id: string, dir: string, events: SessionEvent[], masker: Masker) {
    this.id = id;
    this.dir = dir;
    this.events = events;
    this.#masker = masker;
    this.#file = openPrivateAppend(join(dir, TRANSCRIPT));
    this.#mirror = openPrivateAppend(join(dir, MIRROR));
  }

  /** Where a tool reads the conversation (MAGI_CONTEXT_PATH). */
  get contextPath(): string {
    return join(this.dir, MIRROR);
  }

  /** Creates a new session folder under `sessionsDir` (mode 0700). */
  static create(
    sessionsDir: string,
    masker: Masker,
    meta: { cwd: string; provider: string; model: string; parent?: string },
  ): Session {
    const id = newId();
    const dir = join(sessionsDir, id);
    privateDir(sessionsDir);
    privateDir(dir);
    const session = new Session(id, dir, [], masker);
    session.append({ type: "session", v: 1, id, ...meta });
    return session;
  }

  /**
   * Opens a session to continue it. `id` may be a unique prefix of a session's id, or
   * `last`. A half-written last line (magi was killed while writing it) is cut off with a
   * warning; another line that is not JSON is skipped with a warning.
   *
   * @throws Error when no session, or more than one, matches `id`
   */
  static open(sessionsDir: string, id: string, masker: Masker, warn: Warn): Session {
    const found = findSession(sessionsDir, id);
    const dir = join(sessionsDir, found);
    const path = join(dir, TRANSCRIPT);
    const bytes = Deno.readFileSync(path);
    const lastNewline = tornTail(bytes);
    if (lastNewline + 1 < bytes.length) {
      warn(
        `session "${found}": ignored a half-written last line (${
          bytes.length - lastNewline - 1
        } bytes)`,
      );
      Deno.truncateSync(path, lastNewline + 1);
    }
    const text = new TextDecoder().decode(bytes.subarray(0, lastNewline + 1));
    const events: SessionEvent[] = [];
    text.split("\n").forEach((line, i) => {
      if (line.trim() === "") return;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        warn(`session "${found}": line ${i + 1} of ${TRANSCRIPT} is not JSON; skipped`);
        return;
      }
      if (isEvent(event)) events.push(event);
      else {warn(
          `session "${found}": line ${i + 1} of ${TRANSCRIPT} is not a session event; skipped`,
        );}
    });
    return new Session(found, dir, events, masker);
  }

  /** Masks every string of the event, appends it as one line and fsyncs the transcript. */
  append(event: NewEvent): SessionEvent {
    const ordered = Object.assign({ type: event.type, at: new Date().toISOString() }, event);
    const full = maskDeep(this.#masker, ordered) as SessionEvent;
    writeAll(this.#file, JSON.stringify(full) + "\n");
    this.#file.syncSync();
    this.events.push(full);
    const mirror = mirrorText(full);
    if (mirror) writeAll(this.#mirror, mirror);
    return full;
  }

  /**
   * The conversation as messages, in order. Tool results are recorded as they finish; here
   * those of one answer come back in the order of its tool calls. `prune` and `compaction`
   * events apply where they stand (lib/agent/history.ts).
   */
  messages(): Message[] {
    const out: Message[] = [];
    let order = new Map<string, number>();
    let results: Extract<Message, { role: "tool" }>[] = [];
    const flush = () => {
      const rank = (m: Extract<Message, { role: "tool" }>) => order.get(m.result.id) ?? order.size;
      out.push(...results.sort((a, b) => rank(a) - rank(b)));
      results = [];
    };
    for (const e of this.events) {
      if (e.type === "prune") {
        flush();
        pruneMessages(out, e.upto, this.dir);
        continue;
      }
      if (e.type === "compaction") {
        flush();
        const kept = Math.max(0, Math.min(e.kept, out.length));
        out.splice(0, out.length - kept, summaryMessage(e.summary));
        continue;
      }
      if (e.type === "tool_result") {
        // Only images in this session's own images folder, checked again at each read (a
        // resumed transcript too); lib/agent/images.ts.
        const { images, notes } = sessionImages(e.images, this.dir);
        results.push({
          role: "tool",
          result: {
            id: e.id,
            name: e.name,
            said: notes.length ? [e.said, ...notes].join("\n") : e.said,
            is_error: e.is_error,
            ...(images.length ? { images } : {}),
          },
        });
        continue;
      }
      if (e.type !== "user" && e.type !== "assistant") continue;
      flush();
      if (e.type === "user") out.push({ role: "user", text: e.text });
      else {
        const calls = e.tool_calls ?? [];
        order = new Map(calls.map((c, i) => [c.id, i]));
        // terminal (#18): the next request tells the model its answer was cut by the person.
        const text = e.interrupted ? `${e.text}\n\n${INTERRUPTED_NOTE}` : e.text;
        out.push({
          role: "assistant",
          text: text ?? "",
          tool_calls: calls,
          ...(Array.isArray(e.thinking) && e.thinking.length > 0 ? { thinking: e.thinking } : {}),
        });
      }
    }
    flush();
    return out;
  }

  /** Tool calls of the last assistant message that have no result (magi died mid-turn). */
  unanswered(): ToolCallRequest[] {
    let at = -1;
    for (let i = this.events.length - 1; i >= 0; i--) {
      if (this.events[i].type === "assistant") {
        at = i;
        break;
      }
    }
    if (at < 0) return [];
    const last = this.events[at] as Extract<SessionEvent, { type: "assistant" }>;
    const answered = new Set(
      this.events.slice(at + 1).flatMap((e) => e.type === "tool_result" ? [e.id] : []),
    );
    return (last.tool_calls ?? []).filter((c) => !answered.has(c.id));
  }

  /** The first event (provider and model the session started with), if any. */
  get meta(): Extract<SessionEvent, { type: "session" }> | undefined {
    const first = this.events[0];
    return first?.type === "session" ? first : undefined;
  }

  close(): void {
    this.#file.close();
    this.#mirror.close();
  }
}

/**
 * Where the transcript's whole lines end: the index of the newline after the last line that is
 * whole JSON (-1 when none). A kill mid-append leaves a tail with no newline, or (a write split
 * by the OS) one that ends in a newline but is not JSON; either is torn and cut off, so the
 * session stays resumable and later appends do not follow garbage.
 */
function tornTail(bytes: Uint8Array): number {
  let end = bytes.lastIndexOf(10);
  if (end < 0) return -1;
  const start = bytes.lastIndexOf(10, end - 1) + 1;
  try {
    JSON.parse(new TextDecoder().decode(bytes.subarray(start, end)));
  } catch {
    end = start - 1;
  }
  return end;
}

/** Whether a transcript line has the shape of the event its type names. */
function isEvent(value: unknown): value is SessionEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const text = (k: string) => typeof e[k] === "string";
  switch (e.type) {
    case "user":
      return text("text");
    case "assistant":
      return (e.text === undefined || text("text")) && (e.tool_calls === undefined ||
        Array.isArray(e.tool_calls) &&
          e.tool_calls.every((c) =>
            typeof c === "object" && c !== null && typeof c.id === "string" &&
            typeof c.name === "string"
          ));
    case "tool_result":
      return text("id") && text("name") && text("said") && typeof e.is_error === "boolean";
    case "prune":
      return typeof e.upto === "number";
    case "compaction":
      return text("summary") && typeof e.kept === "number";
    default:
      return typeof e.type === "string";
  }
}

function writeAll(file: Deno.FsFile, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
}

function mirrorText(e: SessionEvent): string {
  switch (e.type) {
    case "user":
      return `## user\n\n${e.text}\n\n`;
    case "assistant": {
      const calls = e.tool_calls.map((c) => `- tool call \`${c.name}\` (${c.id}): ${c.arguments}\n`)
        .join("");
      return `## assistant\n\n${e.text ? e.text + "\n\n" : ""}${calls}${calls ? "\n" : ""}`;
    }
    case "tool_result":
      return `## tool result \`${e.name}\` (${e.id})${e.is_error ? " [error]" : ""}\n\n${
        e.said.endsWith("\n") ? e.said : e.said + "\n"
      }\n`;
    case "compaction":
      return `## summary of the conversation so far (${e.trigger})\n\n${e.summary.trim()}\n\n`;
    default:
      return "";
  }
}

/** One line of `magi sessions`. */
export interface SessionSummary {
  id: string;
  dir: string;
  /** ISO 8601 time of the first event. */
  started: string;
  /** Last change of the transcript, ISO 8601. */
  updated: string;
  provider: string;
  model: string;
  /** The first user message, cut to 80 characters. */
  title: string;
  events: number;
}

/** Lists the sessions under `sessionsDir`, oldest first; unreadable folders are skipped. */
export function listSessions(sessionsDir: string): SessionSummary[] {
  const out: SessionSummary[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(sessionsDir)];
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!entry.isDirectory) continue;
    const dir = join(sessionsDir, entry.name);
    try {
      const path = join(dir, TRANSCRIPT);
      const text = Deno.readTextFileSync(path);
      const lines = text.split("\n").filter((l) => l.trim() !== "");
      const events = lines.flatMap((l) => {
        try {
          return [JSON.parse(l) as SessionEvent];
        } catch {
          return [];
        }
      });
      const first = events[0]?.type === "session" ? events[0] : undefined;
      const user = events.find((e) => e.type === "user");
      const title = user?.type === "user" ? user.text.replace(/\s+/g, " ").trim() : "";
      out.push({
        id: entry.name,
        dir,
        started: first?.at ?? "",
        updated: Deno.statSync(path).mtime?.toISOString() ?? "",
        provider: first?.provider ?? "",
        model: first?.model ?? "",
        title: title.length > 80 ? title.slice(0, 79) + "…" : title,
        events: events.length,
      });
    } catch {
      continue;
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

function findSession(sessionsDir: string, id: string): string {
  const ids = listSessions(sessionsDir).map((s) => s.id);
  if (id === "last") {
    if (ids.length === 0) throw new Error(`no sessions in "${sessionsDir}"`);
    return ids[ids.length - 1];
  }
  if (ids.includes(id)) return id;
  const matches = ids.filter((s) => s.startsWith(id));
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) {
    throw new Error(`no session "${id}" in "${sessionsDir}"; \`magi sessions\` lists them`);
  }
  throw new Error(`session "${id}" is ambiguous: ${matches.join(", ")}`);
}
