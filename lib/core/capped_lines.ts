/**
 * Newline-delimited messages with a size cap (MCP's stdio framing), in both directions: a
 * line over the cap is not buffered whole — its first and last bytes are kept (enough to find
 * its `id`, which the MCP SDK writes last), the rest is counted and dropped as it streams —
 * and becomes one "oversized" piece, so the session goes on with the next line.
 *
 * @module
 */
import { concatBytes } from "./bytes.ts";

/** One framed piece: a line (with its line break, as read), or a line over the cap. */
export type Piece =
  | { kind: "line"; bytes: Uint8Array }
  | {
    kind: "oversized";
    /** The line's length in bytes, without its line break. */
    bytes: number;
    /** Its first {@link HEAD_BYTES} bytes. */
    head: Uint8Array;
    /** Its last {@link HEAD_BYTES} bytes (without the line break). */
    tail: Uint8Array;
  };

/** Bytes kept of each end of an oversized line (to read its `id`). */
export const HEAD_BYTES = 4096;

/** The last {@link HEAD_BYTES} bytes of `kept` followed by `more`. */
function lastBytes(kept: Uint8Array, more: Uint8Array): Uint8Array {
  if (more.length >= HEAD_BYTES) return more.slice(more.length - HEAD_BYTES);
  const keep = kept.subarray(Math.max(0, kept.length - (HEAD_BYTES - more.length)));
  const out = new Uint8Array(keep.length + more.length);
  out.set(keep);
  out.set(more, keep.length);
  return out;
}

/** `line` less its line break (`\n` or `\r\n`). */
function withoutBreak(line: Uint8Array): Uint8Array {
  let end = line.length;
  if (line[end - 1] === 10) end--;
  if (line[end - 1] === 13) end--;
  return line.subarray(0, end);
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  return chunks.length === 1 ? chunks[0] : concatBytes(chunks, total);
}

/** Splits a byte stream into lines of at most `maxBytes` bytes (line break not counted). */
export class CappedLines {
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /** The line under way is over the cap: its head, and its length so far. */
  #dropping: { head: Uint8Array; tail: Uint8Array; bytes: number } | undefined;

  /** @param maxBytes the largest line, in bytes, without its line break */
  constructor(readonly maxBytes: number) {}

  /** The pieces completed by `chunk`. */
  push(chunk: Uint8Array): Piece[] {
    const out: Piece[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl + 1);
      start = nl + 1;
      if (this.#dropping) {
        const { head, tail, bytes } = this.#dropping;
        this.#dropping = undefined;
        const last = lastBytes(tail, piece);
        out.push({
          kind: "oversized",
          bytes: bytes + piece.length - 1,
          head,
          tail: withoutBreak(last),
        });
        continue;
      }
      const length = this.#pendingBytes + piece.length;
      const line = concat([...this.#pending, piece], length);
      this.#pending = [];
      this.#pendingBytes = 0;
      if (length - 1 > this.maxBytes) {
        const tail = withoutBreak(line);
        out.push({
          kind: "oversized",
          bytes: length - 1,
          head: line.slice(0, HEAD_BYTES),
          tail: tail.slice(Math.max(0, tail.length - HEAD_BYTES)),
        });
      } else out.push({ kind: "line", bytes: line });
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return out;
    if (this.#dropping) {
      this.#dropping.bytes += rest.length;
      this.#dropping.tail = lastBytes(this.#dropping.tail, rest);
      return out;
    }
    this.#pending.push(rest.slice());
    this.#pendingBytes += rest.length;
    if (this.#pendingBytes > this.maxBytes) {
      const all = concat(this.#pending, this.#pendingBytes);
      this.#dropping = {
        head: all.slice(0, HEAD_BYTES),
        tail: all.slice(Math.max(0, all.length - HEAD_BYTES)),
        bytes: this.#pendingBytes,
      };
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    return out;
  }

  /** What is left when the stream ends: a last line without a line break, if any. */
  end(): Piece[] {
    if (this.#dropping) {
      const { head, tail, bytes } = this.#dropping;
      this.#dropping = undefined;
      return [{ kind: "oversized", bytes, head, tail }];
    }
    if (this.#pendingBytes === 0) return [];
    const line = concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    return [{ kind: "line", bytes: line }];
  }
}

/** What the start of a JSON-RPC message says about it. */
export interface MessageHead {
  /** Its top-level `id` (a string or an integer), when it comes early enough. */
  id?: string | number;
  /** Whether a top-level `method` was seen (a request or notification, not a response). */
  method: boolean;
}

/**
 * What the start and the end of an oversized message say: {@link readHead} of its start,
 * with the `id` read from its end when its start has none (the SDK writes `id` last).
 */
export function readEnds(head: Uint8Array, tail: Uint8Array): MessageHead {
  const dec = new TextDecoder();
  const seen = readHead(dec.decode(head));
  if (seen.id === undefined) {
    const id = readTailId(dec.decode(tail));
    if (id !== undefined) seen.id = id;
  }
  return seen;
}

/**
 * The `id` that ends a JSON object — `…,"id":5}` — when it is a top-level member: a nested
 * object's last member is followed by two closing braces, and a quoted `\"id\"` is escaped.
 */
export function readTailId(text: string): string | number | undefined {
  const m = text.match(/(?<![\\])"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$/);
  if (!m) return undefined;
  const before = text.slice(0, m.index);
  // `"id"` must start a member: after `,` or `{`.
  if (!/[,{]\s*$/.test(before)) return undefined;
  const id = JSON.parse(m[1]);
  return typeof id === "string" || Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Reads the top-level `id` and whether there is a `method` from the start of a JSON object,
 * without parsing the whole: keys nested in `params` or `result` are never mistaken for
 * them. Stops where the text ends or stops being JSON.
 */
export function readHead(text: string): MessageHead {
  const head: MessageHead = { method: false };
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  /** Reads a JSON string at i; undefined when it is cut off. */
  const string = (): string | undefined => {
    const from = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) return undefined;
    i++;
    try {
      return JSON.parse(text.slice(from, i));
    } catch {
      return undefined;
    }
  };
  /** Skips one JSON value at i; false when it is cut off. */
  const skip = (): boolean => {
    let depth = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        if (string() === undefined) return false;
      } else if (c === "{" || c === "[") {
        depth++;
        i++;
      } else if (c === "}" || c === "]") {
        if (depth === 0) return true;
        depth--;
        i++;
      } else if (c === "," && depth === 0) return true;
      else i++;
      if (depth === 0 && (text[i - 1] === '"' || text[i - 1] === "}" || text[i - 1] === "]")) {
        return true;
      }
    }
    return false;
  };
  ws();
  if (text[i] !== "{") return head;
  i++;
  while (i < text.length) {
    ws();
    if (text[i] !== '"') return head;
    const key = string();
    ws();
    if (key === undefined || text[i] !== ":") return head;
    i++;
    ws();
    if (key === "method") head.method = true;
    if (key === "id") {
      const m = text.slice(i).match(/^(?:"(?:[^"\\]|\\.)*"|-?\d+)(?=\s*[,}])/);
      if (m) {
        const id = JSON.parse(m[0]);
        if (typeof id === "string" || Number.isSafeInteger(id)) head.id = id;
      }
    }
    if (!skip()) return head;
    ws();
    if (text[i] !== ",") return head;
    i++;
  }
  return head;
}
