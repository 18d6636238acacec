/**
 * The stdio transport for MCP servers magi starts: the server runs in its own process
 * group (so ending it ends everything it started), its stdout carries newline-delimited
 * JSON-RPC, each message at most `maxMessageBytes` (config `limits.mcp_message_bytes`): a
 * larger one is dropped as it streams and the call it answers ends with an error saying its
 * size, while the connection goes on. The tail of its stderr is kept for messages. Every group still alive is killed when magi exits, and what left a server's group
 * is swept by its `MAGI_PROCESS_TAG` once the server has ended.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { killGroup, trackGroup } from "../../exec/spawn.ts";
import { newTag, TAG_VARIABLE } from "../../exec/sweep.ts";
import { CappedLines, type Piece, readEnds } from "../../core/capped_lines.ts";

/** The largest single message read from a server, in bytes, unless configured. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_BYTES = 2048;
/** Milliseconds between TERM and KILL when a server is closed. */
const GRACE_MS = 1000;

/** What to start. */
export interface ChildOptions {
  command: string;
  args: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  /** The whole environment of the server. */
  env: Record<string, string>;
  /** The largest message read from the server, in bytes (default {@link MAX_MESSAGE_BYTES}). */
  maxMessageBytes?: number;
}

/** An SDK `Transport` over a child process's stdin and stdout. */
export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #stderr = new Uint8Array(0);
  #closed = false;
  #status: Deno.CommandStatus | undefined;
  readonly #encoder = new TextEncoder();
  /** Ids of magi's requests still waiting for their response. */
  readonly #waiting = new Set<string | number>();

  constructor(private readonly opts: ChildOptions) {}

  /** Starts the server. @throws Error when the program cannot be started */
  start(): Promise<void> {
    // What the server starts and leaves its group (`setsid`) is found by this tag and killed
    // once the server has ended (`sweep.ts`).
    const tag = newTag();
    try {
      this.#child = new Deno.Command(this.opts.command, {
        args: [...this.opts.args],
        cwd: this.opts.cwd,
        env: { ...this.opts.env, [TAG_VARIABLE]: tag },
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      }).spawn();
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound
        ? "no such program"
        : (error as Error).message;
      return Promise.reject(new Error(`cannot start "${this.opts.command}": ${why}`));
    }
    const child = this.#child;
    // Killed when magi exits, normally or by a signal.
    const untrack = trackGroup(child.pid, tag, { atExit: true });
    this.#writer = child.stdin.getWriter();
    const reading = this.#readStdout(child.stdout);
    this.#readStderr(child.stderr);
    child.status.then(async (status) => {
      untrack();
      killGroup(child.pid, "SIGKILL");
      // Messages the server wrote before it ended are still delivered.
      await reading;
      this.#status = status;
      this.#finish();
    });
    return Promise.resolve();
  }

  /** How the server ended, with the tail of its stderr, in one line (empty while it runs). */
  describeEnd(): string {
    const status = this.#status;
    const how = !status
      ? ""
      : status.signal
      ? `ended by ${status.signal}`
      : `exit status ${status.code}`;
    const tail = new TextDecoder().decode(this.#stderr).trim().split("\n").slice(-3).join(" | ");
    return [how, tail ? `stderr: ${tail}` : ""].filter(Boolean).join("; ");
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    const lines = new CappedLines(this.opts.maxMessageBytes ?? MAX_MESSAGE_BYTES);
    try {
      for await (const chunk of stream) {
        for (const piece of lines.push(chunk)) this.#deliver(piece);
      }
      for (const piece of lines.end()) this.#deliver(piece);
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  #deliver(piece: Piece): void {
    if (piece.kind === "oversized") return this.#oversized(piece.bytes, piece.head, piece.tail);
    const line = new TextDecoder().decode(piece.bytes).replace(/\r?\n$/, "");
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    if ("id" in message && !("method" in message) && message.id !== undefined) {
      this.#waiting.delete(message.id);
    }
    this.onmessage?.(message);
  }

  /**
   * A message over the cap was dropped: the request it answers — found by the `id` at its
   * start or end, else the only one waiting — gets an error response saying so; a request
   * from the server gets an error reply.
   */
  #oversized(bytes: number, head: Uint8Array, tail: Uint8Array): void {
    const cap = this.opts.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    const text = `the server's message was ${bytes} bytes, over the cap of ${cap} bytes ` +
      "(config limits.mcp_message_bytes), and was dropped";
    const seen = readEnds(head, tail);
    if (seen.method && seen.id !== undefined) {
      // A request of the server's (elicitation…) too big to read: it is told, not left waiting.
      this.onerror?.(new Error(text));
      this.send({ jsonrpc: "2.0", id: seen.id, error: { code: -32600, message: text } })
        .catch(() => {});
      return;
    }
    const id = seen.id !== undefined && this.#waiting.has(seen.id)
      ? seen.id
      : !seen.method && seen.id === undefined && this.#waiting.size === 1
      ? [...this.#waiting][0]
      : undefined;
    if (id === undefined) return this.onerror?.(new Error(text));
    this.#waiting.delete(id);
    this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32600, message: text } });
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) {
        const joined = new Uint8Array(this.#stderr.length + chunk.length);
        joined.set(this.#stderr);
        joined.set(chunk, this.#stderr.length);
        this.#stderr = joined.slice(Math.max(0, joined.length - STDERR_TAIL_BYTES));
      }
    } catch {
      // The server is gone.
    }
  }

  /** Writes one message to the server's stdin. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closed) throw new Error("the MCP server is not running");
    if ("method" in message && "id" in message) this.#waiting.add(message.id);
    if ("method" in message && message.method === "notifications/cancelled") {
      const params = (message as { params?: { requestId?: string | number } }).params;
      if (params?.requestId !== undefined) this.#waiting.delete(params.requestId);
    }
    await this.#writer.write(this.#encoder.encode(serializeMessage(message)));
  }

  /** Ends the server: stdin closed, then TERM, then KILL to its whole process group. */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child || this.#status) return this.#finish();
    await this.#writer?.close().catch(() => {});
    killGroup(child.pid, "SIGTERM");
    const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), GRACE_MS);
    await child.status.catch(() => {});
    clearTimeout(timer);
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
