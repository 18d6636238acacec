/**
 * What pruning and compaction do to the conversation the model reads, as pure functions
 * of the transcript: a pruned tool result keeps its head and a note naming the file that
 * holds all of it; a compaction replaces the older messages by one user message carrying
 * the summary. The transcript keeps every original event; `Session.messages()` applies
 * these in order, so the same transcript always gives the same, byte-identical messages.
 *
 * @module
 */
import { join } from "node:path";
import type { Message, ToolResultMessage } from "./provider.ts";

/** How much of a pruned tool result the model still reads, in characters. */
export const PRUNED_HEAD_CHARS = 600;

/** The first line of the message that stands for the summarised part. */
export const SUMMARY_HEADING =
  "[magi: the earlier part of this conversation was summarised to keep it within the context window; the summary follows]";

/** Where the whole of a pruned result is kept: `<session>/spill/pruned-<call id>.txt`. */
export function prunedPath(sessionDir: string, id: string): string {
  return join(sessionDir, "spill", `pruned-${id.replace(/[^A-Za-z0-9_-]/g, "_")}.txt`);
}

/** Whether a result is already short enough that pruning it would save nothing. */
export function prunable(result: ToolResultMessage): boolean {
  return result.said.length > PRUNED_HEAD_CHARS * 2;
}

/**
 * A tool result cut to its head (at a line end where one is near) and a note naming the
 * file with the whole; a short result comes back unchanged.
 */
export function prunedResult(result: ToolResultMessage, sessionDir: string): ToolResultMessage {
  if (!prunable(result)) return result;
  let head = result.said.slice(0, PRUNED_HEAD_CHARS);
  const nl = head.lastIndexOf("\n");
  if (nl > PRUNED_HEAD_CHARS / 2) head = head.slice(0, nl + 1);
  const path = prunedPath(sessionDir, result.id);
  const note =
    `[magi: older tool result pruned to its first ${head.length} of ${result.said.length} ` +
    `characters to keep the context window; the whole result is in ${path}]`;
  return { ...result, said: `${head}${head.endsWith("\n") ? "" : "\n"}${note}` };
}

/** Prunes the tool results among the first `upto` messages (the list is changed). */
export function pruneMessages(messages: Message[], upto: number, sessionDir: string): void {
  for (let i = 0; i < Math.min(upto, messages.length); i++) {
    const m = messages[i];
    if (m.role === "tool") {
      messages[i] = { role: "tool", result: prunedResult(m.result, sessionDir) };
    }
  }
}

/** The user message that stands for a summarised part. */
export function summaryMessage(summary: string): Message {
  return { role: "user", text: `${SUMMARY_HEADING}\n\n${summary.trim()}` };
}

/**
 * Whether the messages from `at` on can stand alone after a summary: `at` starts at a user
 * message or an answer, never at a tool result (whose call would be summarised away).
 */
export function safeSplit(messages: readonly Message[], at: number): boolean {
  return at > 0 && at < messages.length && messages[at].role !== "tool";
}
