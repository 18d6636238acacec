/**
 * Searching one file for `grep`, in chunks: the file is read {@link CHUNK_BYTES} at a time
 * and matched a block of whole lines at a time, so memory stays bounded however large the
 * file is. A block starts with the last `context` lines of the block before (for context
 * lines, never matched again), so output is the same as matching the whole file, except that
 * a match cannot span two blocks (a pattern that matches `\n` finds lines within a block only).
 * A line longer than {@link MAX_LINE_BYTES} is searched in its first part only; its note says
 * so when it is shown.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { describeError, looksBinary, safeText } from "./_files.ts";
import { openDeferred } from "./_race_free.ts";

/** Bytes read from a file at a time. */
export const CHUNK_BYTES = 64 * 1024;
/**
 * Bytes of one line kept for matching (1 MiB): the rest of a longer line is read past and
 * only counted. A line whose end arrives in the read that crosses this mark is kept whole, so
 * a kept line holds at most MAX_LINE_BYTES + CHUNK_BYTES bytes.
 */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Bytes read from one file between two turns of the event loop. */
export const TURN_BYTES = 16 * 1024 * 1024;
/** Characters of one line shown (around the match for a matching line). */
const MAX_LINE_CHARS = 240;

/** The search's state: what is shown, what is counted. */
export class Search {
  readonly out: string[] = [];
  shownLines = 0;
  moreLines = 0;
  files = 0;
  /** Lines longer than {@link MAX_LINE_BYTES}, searched in their first part only. */
  cutLines = 0;
  readonly problems: string[] = [];
  /** Given paths that could not be searched at all. */
  failedPaths = 0;
  /** Why the search ended early, if it did. */
  stopped = "";

  /**
   * Whether files may be matched as byte strings (latin1, no UTF-8 decoding): the pattern
   * is ASCII, so it matches the same bytes either way. `risky` patterns (wildcards and
   * classes that could match one byte of a multi-byte character) still decode blocks that
   * hold non-ASCII bytes.
   */
  readonly bytewise: boolean;
  readonly risky: boolean;

  constructor(
    readonly re: RegExp,
    readonly limit: number,
    readonly context: number,
    readonly glob: ((path: string) => boolean) | undefined,
  ) {
    // deno-lint-ignore no-control-regex
    this.bytewise = !/[^\u0000-\u007f]/.test(re.source);
    // The line anchors grep.ts writes (`(?<![^\n])`, `(?![^\n])`) only look for a newline.
    const own = re.source.replaceAll("(?<![^\\n])", "").replaceAll("(?![^\\n])", "");
    this.risky = /\.|\[\^|\\[WSDsuxcpk]/.test(own);
  }
}

// Read buffers are reused: most files fit one chunk, and a fresh buffer per file is garbage.
const POOLED_BYTES = 2 * CHUNK_BYTES;
const pool: Uint8Array[] = [];

const NEWLINE = 10;
const decoder = new TextDecoder();
const keepBom = new TextDecoder("utf-8", { ignoreBOM: true });
const NON_ASCII = /[\x80-\xff]/;

/**
 * One file being searched. `step()` reads and searches up to {@link TURN_BYTES} and says
 * whether more is left; `close()` must follow. Problems (a file that cannot be opened or
 * read) go to `search.problems`; a file that vanished since its folder was listed is none.
 */
export class FileScan {
  #file: Deno.FsFile | undefined;
  #prove: () => void = () => {};
  #buf: Uint8Array = pool.pop() ?? new Uint8Array(POOLED_BYTES);
  /** Bytes held: carried context lines, then lines not yet searched, then a partial line. */
  #len = 0;
  /** Complete lines at the buffer's start that were searched already (context only). */
  #carryLines = 0;
  /** Where the line not yet complete starts, and its number. */
  #partial = 0;
  #partialLine = 1;
  /** The number of the buffer's first line. */
  #line0 = 1;
  #started = false;
  #done = false;
  /** Reading past the rest of a line longer than MAX_LINE_BYTES. */
  #skipping = false;
  #kept = 0;
  #skipped = 0;
  /** Line number → its full length in bytes, for the lines cut at MAX_LINE_BYTES. */
  readonly #cut = new Map<number, number>();
  // What was shown of this file: the last line number printed and where it ends in the
  // current block's text; the last matching line (0: none yet).
  #printed = 0;
  #printedEnd = -1;
  #prevLine = 0;
  #matched = false;

  /**
   * @param path the file's real path (from the walk or the roots check)
   * @param roots the allowed roots: the file is opened verified against them (_race_free.ts)
   */
  constructor(
    readonly search: Search,
    readonly path: string,
    readonly shown: string,
    readonly roots: readonly string[],
  ) {}

  /** Reads and searches on; true when the file has more to read (after a turn). */
  step(): boolean {
    if (this.#done) return false;
    try {
      return this.#step();
    } catch (error) {
      this.#done = true;
      // A file that vanished since the folder was listed is no problem of the search.
      if (!(error instanceof Deno.errors.NotFound)) {
        const name = this.shown || this.path;
        this.search.problems.push(`Cannot search "${name}": ${describeError(error)}`);
      }
      return false;
    }
  }

  /** Closes the file and gives the buffer back. */
  close(): void {
    this.#done = true;
    this.#file?.close();
    this.#file = undefined;
    if (this.#buf.length === POOLED_BYTES && pool.length < 4) pool.push(this.#buf);
    this.#buf = new Uint8Array(0);
  }

  #step(): boolean {
    if (!this.#file) {
      // Opened verified (_race_free.ts); the proof is taken before the file first shows in
      // the result (a match or a cut line), so files that never match cost no proof.
      const { file, prove } = openDeferred(this.path, this.roots);
      this.#file = file;
      this.#prove = prove;
    }
    let read = 0;
    while (read < TURN_BYTES) {
      this.#reserve(CHUNK_BYTES);
      const from = this.#len;
      const n = readFull(this.#file, this.#buf.subarray(from, from + CHUNK_BYTES));
      const eof = n < CHUNK_BYTES;
      read += n;
      if (!this.#started) {
        this.#started = true;
        if (n === 0 || looksBinary(this.#buf.subarray(0, n))) return this.#finish();
      }
      let to = from + n;
      if (this.#skipping) {
        const nl = this.#buf.subarray(from, to).indexOf(NEWLINE);
        this.#skipped += nl === -1 ? n : nl;
        if (nl === -1) {
          to = from;
        } else {
          this.#buf.copyWithin(from, from + nl, to);
          to -= nl;
        }
        if (nl !== -1 || eof) this.#endCut();
      }
      this.#len = to;
      if (eof) {
        this.#searchBlock(to, true);
        return this.#finish();
      }
      if (this.#skipping) continue;
      const end = this.#buf.subarray(this.#partial, to).lastIndexOf(NEWLINE);
      if (end !== -1) {
        this.#searchBlock(this.#partial + end + 1, false);
      } else if (to - this.#partial > MAX_LINE_BYTES) {
        this.#startCut();
      }
    }
    return true;
  }

  #finish(): false {
    this.#done = true;
    return false;
  }

  /** Room for `more` bytes after what is held. */
  #reserve(more: number): void {
    if (this.#len + more <= this.#buf.length) return;
    const bigger = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + more));
    bigger.set(this.#buf.subarray(0, this.#len));
    this.#buf = bigger;
  }

  /** The partial line is past MAX_LINE_BYTES: keep its start, read past the rest. */
  #startCut(): void {
    let keep = this.#partial + MAX_LINE_BYTES;
    // Whole UTF-8 characters only: the first byte dropped is no continuation byte.
    while (keep > this.#partial && (this.#buf[keep] & 0xc0) === 0x80) keep--;
    this.#kept = keep - this.#partial;
    this.#skipped = this.#len - keep;
    this.#len = keep;
    this.#skipping = true;
  }

  #endCut(): void {
    this.#prove();
    this.#skipping = false;
    this.#cut.set(this.#partialLine, this.#kept + this.#skipped);
    this.search.cutLines++;
  }

  /**
   * Searches the lines in `[0, end)` that were not searched before, then keeps the last
   * `context` of them at the buffer's start for the next block.
   */
  #searchBlock(end: number, final: boolean): void {
    const search = this.search;
    const bytes = this.#buf.subarray(0, end);
    let text: string;
    let bytewise = false;
    if (search.bytewise) {
      text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
      bytewise = !search.risky || !NON_ASCII.test(text);
      if (!bytewise) text = this.#decode(bytes);
    } else {
      text = this.#decode(bytes);
    }
    // Where this block's new lines start: after the carried context lines.
    let fresh = 0;
    for (let i = 0; i < this.#carryLines; i++) fresh = text.indexOf("\n", fresh) + 1;
    const firstLine = this.#line0 + this.#carryLines;
    // Pending after-context goes on from the end of the last carried line.
    this.#printedEnd = this.#printed === firstLine - 1 ? fresh - 1 : -1;
    const endLine = fresh < text.length
      ? this.#match(text, fresh, firstLine, bytewise, final)
      : firstLine;
    if (final) return;
    this.#partialLine = endLine;
    this.#keepContext(end, endLine);
  }

  #decode(bytes: Uint8Array): string {
    // A byte order mark is dropped at the file's start only.
    return (this.#line0 === 1 ? decoder : keepBom).decode(bytes);
  }

  /** Moves the last `context` lines before `end` and the partial line after it to the start. */
  #keepContext(end: number, endLine: number): void {
    let start = end;
    let lines = 0;
    while (lines < this.search.context && start > 0) {
      start = start < 2 ? 0 : this.#buf.lastIndexOf(NEWLINE, start - 2) + 1;
      lines++;
    }
    this.#buf.copyWithin(0, start, this.#len);
    this.#len -= start;
    this.#partial = end - start;
    this.#carryLines = lines;
    this.#line0 = endLine - lines;
    for (const line of this.#cut.keys()) if (line < this.#line0) this.#cut.delete(line);
  }

  /**
   * Matches `text` from offset `from` (the start of line `line`) and shows the matching
   * lines, with context; returns the number of the line after the text.
   */
  #match(text: string, from: number, line: number, bytewise: boolean, final: boolean): number {
    const search = this.search;
    const re = search.re;
    re.lastIndex = from;
    let m = re.exec(text);
    const name = this.shown || this.path;
    let counted = from; // offset up to which newlines are counted into `line`
    const C = search.context;
    const emit = (n: number, start: number, end: number, sepChar: string, col = -1) => {
      const full = this.#cut.get(n);
      search.out.push(
        `${name}${sepChar}${n}${sepChar}${clip(text, start, end, col, bytewise, full)}`,
      );
      this.#printed = n;
      this.#printedEnd = end;
    };
    const flushAfter = (upTo: number) => {
      // After-context of the last match, up to (not including) line `upTo`; never a line
      // past the text's final newline.
      let at = this.#printedEnd;
      if (at < 0) return;
      for (
        let n = this.#printed + 1;
        n <= this.#prevLine + C && n < upTo && at + 1 < text.length;
        n++
      ) {
        const end = lineEnd(text, at + 1);
        emit(n, at + 1, end, "-");
        at = end;
      }
    };
    while (m !== null) {
      // An empty match after the final newline is no line of this text (`^$`, `x*`).
      if (m.index === text.length && text.endsWith("\n")) break;
      if (!this.#matched) {
        this.#prove();
        this.#matched = true;
        search.files++;
      }
      if (search.shownLines >= search.limit) {
        // Past the limit only the count matters: no line numbers, no text.
        const end = lineEnd(text, m.index + (m[0].length > 0 ? m[0].length - 1 : 0));
        search.moreLines++;
        if (end >= text.length) break;
        re.lastIndex = end + 1;
        m = re.exec(text);
        continue;
      }
      const start = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
      const end = lineEnd(text, m.index + (m[0].length > 0 ? m[0].length - 1 : 0));
      line += countNewlines(text, counted, start);
      counted = start;
      if (C > 0) {
        if (this.#prevLine > 0) flushAfter(line);
        if (search.out.length > 0 && (this.#prevLine === 0 || line - C > this.#printed + 1)) {
          search.out.push("--");
        }
        const before: [number, number][] = [];
        let at = start;
        for (let n = line - 1; n >= line - C && n > this.#printed && at > 0; n--) {
          const s = at < 2 ? 0 : text.lastIndexOf("\n", at - 2) + 1;
          before.unshift([s, at - 1]);
          at = s;
        }
        before.forEach(([s, e], i) => emit(line - before.length + i, s, e, "-"));
      }
      emit(line, start, end, ":", m.index - start);
      search.shownLines++;
      this.#prevLine = line;
      // One result per line: go on after this line's end.
      line += countNewlines(text, start, end + 1 > text.length ? text.length : end + 1);
      counted = Math.min(end + 1, text.length);
      if (end >= text.length) break;
      re.lastIndex = end + 1;
      m = re.exec(text);
    }
    if (C > 0 && this.#prevLine > 0) flushAfter(Infinity);
    return final ? line : line + countNewlines(text, counted, text.length);
  }
}

/** Reads until `into` is full or the file ends; the bytes read. */
function readFull(file: Deno.FsFile, into: Uint8Array): number {
  let got = 0;
  while (got < into.length) {
    const n = file.readSync(into.subarray(got));
    if (!n) break;
    got += n;
  }
  return got;
}

function lineEnd(text: string, from: number): number {
  const i = text.indexOf("\n", from);
  return i === -1 ? text.length : i;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * One line for output: control characters replaced, a CR dropped, long lines cut. `full` is
 * the length in bytes of a line longer than MAX_LINE_BYTES, of which only the start was kept.
 */
function clip(
  text: string,
  start: number,
  end: number,
  col: number,
  bytewise: boolean,
  full?: number,
): string {
  if (end > start && text.charCodeAt(end - 1) === 13) end--;
  const length = end - start;
  let from = start;
  let to = end;
  if (length > MAX_LINE_CHARS) {
    from = col > MAX_LINE_CHARS / 3 ? start + col - Math.floor(MAX_LINE_CHARS / 3) : start;
    to = Math.min(end, from + MAX_LINE_CHARS);
  }
  if (bytewise) {
    // Whole UTF-8 characters only: move the cuts off continuation bytes.
    while (from > start && (text.charCodeAt(from) & 0xc0) === 0x80) from--;
    while (to < end && (text.charCodeAt(to) & 0xc0) === 0x80) to++;
  }
  let slice = text.slice(from, to);
  if (bytewise) slice = Buffer.from(slice, "latin1").toString("utf8");
  slice = safeText(slice).replaceAll("\n", "\\n");
  if (from === start && to === end && full === undefined) return slice;
  const note = full !== undefined
    ? `line of ${full} bytes, searched in its first ${MAX_LINE_BYTES}`
    : `${bytewise ? "line of " : ""}${length} ${bytewise ? "bytes" : "characters"}`;
  return (from > start ? "…" : "") + slice + `… [${note}]`;
}
