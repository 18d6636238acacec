/**
 * Answering malformed requests on `magi mcp`'s stdio. The SDK's stdio transport parses each
 * line against the JSON-RPC message schema and, when that fails, reports the fault and drops
 * the line: a request whose id is readable — `tools/call` with `"params": null`, params that
 * are an array, `_meta` that is a string — then gets no answer at all, and its client waits
 * for ever. Lines go through {@link guardedInput} first: such a request is answered with a
 * JSON-RPC error naming what is wrong (-32602 Invalid params when its params are at fault,
 * else -32600 Invalid request), and everything else reaches the SDK unchanged.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type Readable, Transform } from "node:stream";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { callParamsProblem } from "./call_request.ts";

/** Lines longer than this many bytes are passed on unchecked (the SDK judges them). */
const MAX_CHECKED_LINE = 1024 * 1024;

/** A JSON-RPC error response to one request. */
export interface ErrorReply {
  jsonrpc: "2.0";
  id: string | number;
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
  } catch {
    return undefined;
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
 * The lines of `input`, less the malformed requests, which are answered through `answer`
 * instead (see {@link replyToMalformed}). Give the result to the SDK's StdioServerTransport in
 * place of stdin.
 */
export function guardedInput(input: Readable, answer: (reply: ErrorReply) => void): Readable {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** The line under way is too long to check: its bytes are passed on as they come. */
  let passing = false;
  const guard = new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      let start = 0;
      for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
        const piece = bytes.subarray(start, nl + 1);
        start = nl + 1;
        if (passing) {
          passing = false;
          this.push(piece);
          continue;
        }
        const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        pendingBytes = 0;
        const reply = replyToMalformed(line.toString("utf8").replace(/\r?\n$/, ""));
        if (reply) answer(reply);
        else this.push(line);
      }
      const rest = bytes.subarray(start);
      if (rest.length > 0) {
        if (passing) this.push(rest);
        else {
          pending.push(rest);
          pendingBytes += rest.length;
          if (pendingBytes > MAX_CHECKED_LINE) {
            this.push(Buffer.concat(pending));
            pending = [];
            pendingBytes = 0;
            passing = true;
          }
        }
      }
      done();
    },
    flush(done) {
      if (pending.length > 0) this.push(Buffer.concat(pending));
      done();
    },
  });
  input.pipe(guard);
  return guard;
}
