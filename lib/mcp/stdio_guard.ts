/**
 * Answering malformed requests on `magi mcp`'s stdio. The SDK's stdio transport parses each
 * line against the JSON-RPC message schema and, when that fails, reports the fault and drops
 * the line: a request whose id is readable — `tools/call` with `"params": null`, params that
 * are an array, `_meta` that is a string — then gets no answer at all, and its client waits
 * for ever. Lines go through {@link guardedInput} first: such a request is answered with a
 * JSON-RPC error naming what is wrong (-32602 Invalid params when its params are at fault,
 * else -32600 Invalid request), a line that is no JSON with -32700 Parse error (id null),
 * and a line over the cap (config `limits.mcp_message_bytes`) — dropped as it streams, never
 * held whole — with -32600 and its id when its start names one; everything else reaches the
 * SDK unchanged, and the session goes on.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type Readable, Transform } from "node:stream";
import { CappedLines, type Piece, readEnds } from "../core/capped_lines.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { callParamsProblem } from "./call_request.ts";

/** A JSON-RPC error response to one request (id null when it could not be read). */
export interface ErrorReply {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string };
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first issue of a failed parse as `"a.b": message` (unions: their first branch's). */
function firstIssue(issues: readonly unknown[]): string {
  let issue = issues[0] as { path?: unknown[]; message?: string; errors?: unknown[][] };
  while (issue?.errors?.[0]?.[0]) issue = issue.errors[0][0] as typeof issue;
  const path = (issue?.path ?? []).join(".");
  return `${path ? `"${path}": ` : ""}${issue?.message ?? "not a JSON-RPC message"}`;
}

/**
 * The error to answer a request line with, or undefined when the line is well formed (or is
 * no request with a usable id: then the SDK reports it as before).
 *
 * @param line one line of JSON, without its line break
 */
export function replyToMalformed(line: string): ErrorReply | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch (error) {
    return {
      jsonrpc: "2.0",
      id: null,
      error: { code: ErrorCode.ParseError, message: `Parse error: ${(error as Error).message}` },
    };
  }
  if (!isObject(message) || typeof message.method !== "string") return undefined;
  const id = message.id;
  if (typeof id !== "string" && !(typeof id === "number" && Number.isInteger(id))) {
    return undefined;
  }
  const parsed = JSONRPCMessageSchema.safeParse(message);
  if (parsed.success) return undefined;
  const reply = (code: number, text: string): ErrorReply => ({
    jsonrpc: "2.0",
    id,
    error: { code, message: text },
  });
  const params = message.params;
  if (message.method === "tools/call") {
    const problem = callParamsProblem(params);
    if (problem) return reply(ErrorCode.InvalidParams, problem);
  } else if (params !== undefined && !isObject(params)) {
    return reply(ErrorCode.InvalidParams, `"params" must be an object, not ${kindOf(params)}`);
  }
  const issue = firstIssue(parsed.error.issues);
  const code = issue.startsWith('"params') ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
  return reply(
    code,
    `Invalid ${code === ErrorCode.InvalidParams ? "params" : "request"}: ${issue}`,
  );
}

/**
 * The error for a message of `bytes` bytes over the cap, from its first and last bytes: with
 * its id when they name one; undefined for a notification (it gets no reply).
 */
export function replyToOversized(
  bytes: number,
  head: Uint8Array,
  tail: Uint8Array,
  cap: number,
): ErrorReply | undefined {
  const seen = readEnds(head, tail);
  if (seen.method && seen.id === undefined) return undefined;
  return {
    jsonrpc: "2.0",
    id: seen.id ?? null,
    error: {
      code: ErrorCode.InvalidRequest,
      message: `Invalid request: the message is ${bytes} bytes, over the cap of ${cap} bytes ` +
        "(config limits.mcp_message_bytes)",
    },
  };
}

/**
 * The lines of `input`, less the malformed requests and the lines over `maxBytes`, which are
 * answered through `answer` instead (see {@link replyToMalformed}, {@link replyToOversized}).
 * Give the result to the SDK's StdioServerTransport in place of stdin; every line it passes
 * on is whole and at most `maxBytes` long (plus its line break).
 */
export function guardedInput(
  input: Readable,
  answer: (reply: ErrorReply) => void,
  maxBytes: number,
): Readable {
  const lines = new CappedLines(maxBytes);
  const take = (guard: Transform, piece: Piece) => {
    if (piece.kind === "oversized") {
      const reply = replyToOversized(piece.bytes, piece.head, piece.tail, maxBytes);
      if (reply) answer(reply);
      return;
    }
    const text = Buffer.from(piece.bytes).toString("utf8").replace(/\r?\n$/, "");
    if (text.trim() === "") return;
    const reply = replyToMalformed(text);
    if (reply) answer(reply);
    else guard.push(piece.bytes);
  };
  const guard = new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      for (const piece of lines.push(bytes)) take(this, piece);
      done();
    },
    flush(done) {
      for (const piece of lines.end()) {
        // A last line without its line break is passed on as it is (the SDK waits for one).
        if (piece.kind === "line") this.push(piece.bytes);
        else take(this, piece);
      }
      done();
    },
  });
  input.pipe(guard);
  return guard;
}
