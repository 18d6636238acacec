/**
 * `read`: a file's lines with line numbers. A range of a file of any size is read without
 * loading all of it (only the bytes up to the last line asked for are scanned, and only
 * the lines shown are kept); binary files are described instead of dumped; UTF-8 (with or
 * without BOM) and UTF-16 (with BOM) are decoded, invalid bytes shown as U+FFFD; a
 * directory gives a short listing.
 *
 * @module
 */
import { type Builtin, type BuiltinContext, type BuiltinResult, closedObject } from "./builtin.ts";
import { allowed, binaryKind, failure, looksBinary, refused, safeText } from "./_files.ts";
import { listChecked, openChecked } from "./_race_free.ts";
import { readFullSync } from "../../core/bytes.ts";

/** Lines returned when the call gives no limit. */
const DEFAULT_LIMIT = 2000;
/** Characters of one line shown; the rest is cut with a note. */
const MAX_LINE_CHARS = 2000;
/** Bytes of one line kept while scanning (UTF-8 needs up to 4 per character). */
const MAX_LINE_BYTES = MAX_LINE_CHARS * 4;
/** Entries of a directory listing shown. */
const MAX_ENTRIES = 500;
/** UTF-16 files are decoded whole, up to this size in bytes. */
const MAX_UTF16_BYTES = 32 * 1024 * 1024;
const CHUNK = 1024 * 1024;
/** The smallest read buffer (bytes): more than `looksBinary` samples. */
const MIN_CHUNK = 64 * 1024;

/** The `read` builtin. */
export const read: Builtin = {
  name: "read",
  description: "Read a file as numbered lines (cat -n style), or list a directory.\n" +
    "read <path> [--offset N] [--limit N]",
  parameters: closedObject(
    {
      path: { type: "string", description: "File or directory, relative to the working directory" },
      offset: { type: "integer", minimum: 1, description: "First line (1-based)" },
      limit: { type: "integer", minimum: 1, description: `Max lines (${DEFAULT_LIMIT})` },
    },
    ["path"],
    {
      argv: [{ field: "path" }, { flag: "--offset", field: "offset" }, {
        flag: "--limit",
        field: "limit",
      }],
      stdin: { mode: "none" },
    },
  ),
  run: (args, ctx) => readBuiltin(args, ctx),
};

function readBuiltin(
  args: Record<string, unknown>,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  return Promise.resolve(readSync(args, ctx));
}

function readSync(args: Record<string, unknown>, ctx: BuiltinContext): BuiltinResult {
  const path = String(args.path);
  const checked = allowed(path, ctx, "read");
  if (refused(checked)) return checked;
  let opened: { file: Deno.FsFile; info: Deno.FileInfo };
  try {
    // The file opened is verified to be the one the checked path names (a folder swapped
    // for a symlink meanwhile is caught): see _race_free.ts.
    opened = openChecked(checked.real, ctx.roots);
  } catch (error) {
    return failure("read", path, error);
  }
  using file = opened.file;
  const info = opened.info;
  try {
    if (info.isDirectory) return listDirectory(checked.real, ctx.roots);
    if (!info.isFile) return { said: `Cannot read "${path}": not a regular file\n`, isError: true };
    const offset = typeof args.offset === "number" ? args.offset : 1;
    const limit = typeof args.limit === "number" ? args.limit : DEFAULT_LIMIT;
    return readLines(file, path, info.size, offset, limit, ctx.signal);
  } catch (error) {
    return failure("read", path, error);
  }
}

function listDirectory(real: string, roots: readonly string[]): BuiltinResult {
  const names: string[] = [];
  for (const entry of listChecked(real, roots)) {
    names.push(
      entry.isDirectory ? entry.name + "/" : entry.isSymlink ? entry.name + "@" : entry.name,
    );
  }
  names.sort();
  if (names.length === 0) return { said: "(empty directory)\n" };
  const shown = names.slice(0, MAX_ENTRIES).map(safeText);
  const more = names.length > MAX_ENTRIES ? `(${names.length - MAX_ENTRIES} more entries)\n` : "";
  return { said: shown.join("\n") + "\n" + more };
}

/** Collects the shown lines and formats them. */
class Lines {
  readonly out: string[] = [];
  invalid = false;
  readonly #fatal = new TextDecoder("utf-8", { fatal: true });
  readonly #lenient = new TextDecoder("utf-8");

  add(number: number, bytes: Uint8Array, totalBytes: number): void {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 13 && totalBytes === end) end--;
    let text: string;
    try {
      text = this.#fatal.decode(bytes.subarray(0, end));
    } catch {
      text = this.#lenient.decode(bytes.subarray(0, end));
      // A cut inside a character at MAX_LINE_BYTES is not the file's fault.
      if (totalBytes === bytes.length || text.slice(0, -1).includes("\ufffd")) this.invalid = true;
    }
    this.addText(number, text, totalBytes > bytes.length ? totalBytes : undefined);
  }

  addText(number: number, text: string, totalBytes?: number): void {
    let cut = "";
    if (text.length > MAX_LINE_CHARS) {
      text = text.slice(0, MAX_LINE_CHARS);
      cut = ` … [line cut${totalBytes ? `: ${totalBytes} bytes` : ""}]`;
    } else if (totalBytes) cut = ` … [line cut: ${totalBytes} bytes]`;
    this.out.push(`${number}\t${safeText(text)}${cut}`);
  }
}

function finish(lines: Lines, offset: number, more: boolean, total?: number): BuiltinResult {
  if (lines.out.length === 0) {
    if (offset > 1) {
      const has = total === undefined ? "fewer" : `${total}`;
      return { said: `(no line ${offset}: the file has ${has} lines)\n` };
    }
    return { said: "(empty file)\n" };
  }
  const last = offset + lines.out.length - 1;
  let tail = more ? `(more lines follow: read with offset ${last + 1})\n` : "";
  if (lines.invalid) tail += "(invalid UTF-8 bytes are shown as \ufffd)\n";
  return { said: lines.out.join("\n") + "\n" + tail };
}

function readLines(
  file: Deno.FsFile,
  path: string,
  size: number,
  offset: number,
  limit: number,
  signal: AbortSignal,
): BuiltinResult {
  // Synchronous reads of 1 MiB keep a scan through gigabytes several times faster than async;
  // a small file gets a small buffer (zeroing 1 MiB cost a call of a 3-line file 0.2 ms). A
  // file that grew since its stat is read on in more chunks.
  const buf = new Uint8Array(Math.min(CHUNK, Math.max(MIN_CHUNK, size + 1)));
  let n = readFullSync(file, buf);
  let chunk = buf.subarray(0, n);
  const utf16 = chunk[0] === 0xff && chunk[1] === 0xfe
    ? "utf-16le"
    : chunk[0] === 0xfe && chunk[1] === 0xff
    ? "utf-16be"
    : undefined;
  if (utf16) return readUtf16(file, chunk, path, size, utf16, offset, limit);
  if (looksBinary(chunk)) {
    const kind = binaryKind(chunk);
    return {
      said: `"${path}" is a binary file${kind ? ` (${kind})` : ""}, ${size} bytes; not shown\n`,
    };
  }
  let pos = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  const lines = new Lines();
  let line = 1;
  // The current line's first bytes (up to MAX_LINE_BYTES) and its whole length.
  let current: Uint8Array[] = [];
  let kept = 0;
  let length = 0;
  // Whether the last line has bytes and no newline yet.
  let pending = false;
  const keep = (part: Uint8Array) => {
    length += part.length;
    const room = MAX_LINE_BYTES - kept;
    if (room <= 0) return;
    const piece = part.length > room ? part.subarray(0, room) : part;
    current.push(piece.slice());
    kept += piece.length;
  };
  const flush = () => {
    const joined = new Uint8Array(kept);
    let at = 0;
    for (const p of current) {
      joined.set(p, at);
      at += p.length;
    }
    lines.add(line, joined, length);
    current = [];
    kept = 0;
    length = 0;
  };
  while (n > 0) {
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl === -1 ? chunk.length : nl;
      if (line >= offset) keep(chunk.subarray(pos, end));
      if (nl === -1) {
        if (end > pos) pending = true;
        pos = chunk.length;
        break;
      }
      if (line >= offset) {
        if (lines.out.length >= limit) {
          return finish(lines, offset, true);
        }
        flush();
      }
      line++;
      pending = false;
      pos = nl + 1;
    }
    if (signal.aborted) throw new Error("cancelled");
    n = readFullSync(file, buf);
    chunk = buf.subarray(0, n);
    pos = 0;
  }
  const total = pending ? line : line - 1;
  if (line >= offset && pending) {
    if (lines.out.length >= limit) return finish(lines, offset, true);
    flush();
  }
  return finish(lines, offset, false, total);
}

function readUtf16(
  file: Deno.FsFile,
  first: Uint8Array,
  path: string,
  size: number,
  encoding: string,
  offset: number,
  limit: number,
): BuiltinResult {
  if (size > MAX_UTF16_BYTES) {
    return {
      said: `Cannot read "${path}": a UTF-16 file of ${size} bytes (at most ${MAX_UTF16_BYTES})\n`,
      isError: true,
      code: "too_large",
    };
  }
  // The rest of the open file after the first chunk already read.
  const all8 = new Uint8Array(Math.max(size, first.length));
  all8.set(first);
  let at = first.length;
  while (at < all8.length) {
    const n = file.readSync(all8.subarray(at));
    if (n === null) break;
    at += n;
  }
  const text = new TextDecoder(encoding).decode(all8.subarray(0, at));
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  const lines = new Lines();
  const end = Math.min(all.length, offset - 1 + limit);
  for (let i = offset - 1; i < end; i++) lines.addText(i + 1, all[i].replace(/\r$/, ""));
  return finish(lines, offset, end < all.length, all.length);
}
