/**
 * Turning how a process ended into a tool result's error flag and status note (SPEC S2.6):
 * exit status, signal, time-out, and the tail of stderr.
 *
 * @module
 */
import type { Outcome } from "../registry/types.ts";
import type { SpawnOutcome } from "./spawn.ts";

/** At most this many lines of stderr's tail go into an error result. */
const STDERR_LINES = 20;

/** The last lines of stderr as text (invalid UTF-8 replaced), or "" when there are none. */
export function stderrTail(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes).replace(/\s+$/, "");
  if (text === "") return "";
  const lines = text.split("\n");
  return lines.slice(-STDERR_LINES).join("\n");
}

/**
 * Describes a finished process as a tool's outcome: an error for a non-zero status, a
 * signal, a time-out, a cancellation or a failure to start, with stderr's tail in the note.
 *
 * @param timeoutMs the limit that applied, for the time-out note
 */
export function processOutcome(spawned: SpawnOutcome, timeoutMs: number): Outcome {
  if (spawned.startError) return { isError: true, note: `[magi: ${spawned.startError}]` };
  let status: string | undefined;
  if (spawned.timedOut) {
    status = `timed out after ${timeoutMs / 1000} s; its process group was ended`;
  } else if (spawned.cancelled) {
    status = "cancelled; its process group was ended";
  } else if (spawned.signal) {
    status = `killed by signal ${spawned.signal}`;
  } else if (spawned.code !== 0) {
    status = `exit status ${spawned.code}`;
  }
  if (status === undefined) return { isError: false };
  const tail = stderrTail(spawned.stderrTail);
  return { isError: true, note: `[magi: ${status}]` + (tail ? `\n[stderr]\n${tail}` : "") };
}
