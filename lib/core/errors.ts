/**
 * Coded errors of tool results: what kind of failure a result is, so a model, a client or a
 * test can tell "fix the arguments" (`bad_arguments`) from "stop" (`denied`) without reading
 * the prose. The prose stays what the model reads; the code goes beside it, in the result
 * object (`error: {code, message}`), in `magi call --json` and in MCP results' `_meta`.
 *
 * @module
 */

/**
 * - `denied`: the policy or the person refused the call;
 * - `not_found`: no such tool, or its program cannot be started;
 * - `bad_arguments`: the arguments are not JSON, break the schema, or name a missing cwd;
 * - `timeout`: the call ran past its time limit and was ended;
 * - `exit_status`: the program ended with a non-zero status or a signal;
 * - `cancelled`: the caller cancelled the call (Ctrl-C, an MCP cancel);
 * - `too_large`: an input or output was over a limit;
 * - `unanswered`: the tool asked a question that got no (valid) answer;
 * - `tool_error`: any other failure the tool reported (its own error text).
 */
export type ErrorCode =
  | "denied"
  | "not_found"
  | "bad_arguments"
  | "timeout"
  | "exit_status"
  | "cancelled"
  | "too_large"
  | "unanswered"
  | "tool_error";

/** The coded error of an error result. */
export interface CodedError {
  code: ErrorCode;
  /** One line: the note magi appended, or the end of what the tool said. */
  message: string;
}

/**
 * The message of an error result: its note's first line without magi's brackets, else the
 * last line the tool said; at most 300 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorMessage } from "./errors.ts";
 * assert.equal(errorMessage("[magi: exit status 2]\n[stderr]\nboom", ""), "exit status 2");
 * assert.equal(errorMessage(undefined, "Cannot read \"a\": no such file\n"), "Cannot read \"a\": no such file");
 * ```
 */
export function errorMessage(note: string | undefined, said: string): string {
  const line = note
    ? note.split("\n")[0].replace(/^\[magi: (.*)\]$/, "$1")
    : said.trimEnd().split("\n").at(-1) ?? "";
  return line.length > 300 ? line.slice(0, 299) + "…" : line;
}

/**
 * A config file or value that cannot be used; the message names the file and the key. Here,
 * below every folder, so the policy and the sandbox settings throw it without importing the
 * config loader (which imports them).
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}
