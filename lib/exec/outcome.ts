/**
 * Turning how a process ended into a tool result's error flag and status note (SPEC S2.6):
 * exit status, signal, time-out, and the tail of stderr.
 *
 * @module
 */
import type { Outcome } from "../core/types.ts";
import type { SpawnOutcome } from "./spawn.ts";
import type { ErrorCode } from "../core/errors.ts";

/** At most this many lines, and bytes, of stderr's tail go into an error result. */
const STDERR_LINES = 20;
export const STDERR_NOTE_BYTES = 1500;

/**
 * The last lines of stderr as text (invalid UTF-8 replaced), or "" when there are none: at
 * most {@link STDERR_LINES} lines and {@link STDERR_NOTE_BYTES} bytes, cut at line starts.
 *
 * @param cut whether `bytes` is the end of a longer stream: then its first line is a
 *   fragment and is dropped, since a secret cut in two there could not be masked
 */
export function stderrTail(bytes: Uint8Array, cut = false): string {
  let text = new TextDecoder().decode(bytes).replace(/\s+$/, "");
  if (cut) {
    const newline = text.indexOf("\n");
    if (newline === -1) return `[one line of ${bytes.length}+ bytes, not shown]`;
    text = text.slice(newline + 1);
  }
  if (text === "") return "";
  // deno-lint-ignore no-control-regex -- counting control characters is the point
  const control = text.slice(0, 2048).match(/[\x00-\x08\x0e-\x1a\x1c-\x1f]/g)?.length ?? 0;
  if (control > 8) return `[${bytes.length} bytes of binary output, not shown]`;
  let lines = text.split("\n").slice(-STDERR_LINES);
  while (
    lines.length > 1 && new TextEncoder().encode(lines.join("\n")).length > STDERR_NOTE_BYTES
  ) {
    lines = lines.slice(1);
  }
  const kept = lines.join("\n");
  return kept.length > STDERR_NOTE_BYTES ? "…" + kept.slice(-STDERR_NOTE_BYTES) : kept;
}

/**
 * Describes a finished process as a tool's outcome: an error for a non-zero status, a
 * signal, a time-out, a cancellation or a failure to start, with stderr's tail in the note.
 *
 * @param timeoutMs the limit that applied, for the time-out note
 */
export function processOutcome(spawned: SpawnOutcome, timeoutMs: number): Outcome {
  if (spawned.startError) {
    return { isError: true, code: "not_found", note: `[magi: ${spawned.startError}]` };
  }
  let status: string | undefined;
  let code: ErrorCode = "exit_status";
  if (spawned.timedOut) {
    status = `timed out after ${timeoutMs / 1000} s; its process group was ended`;
    code = "timeout";
  } else if (spawned.cancelled) {
    status = "cancelled; its process group was ended";
    code = "cancelled";
  } else if (spawned.signal) {
    status = `killed by signal ${spawned.signal}`;
  } else if (spawned.code !== 0) {
    status = `exit status ${spawned.code}`;
  }
  if (status === undefined) return { isError: false };
  const tail = stderrTail(spawned.stderrTail, spawned.stderrCut);
  return {
    isError: true,
    code,
    note: `[magi: ${status}]` + (tail ? `\n[stderr]\n${tail}` : ""),
  };
}
