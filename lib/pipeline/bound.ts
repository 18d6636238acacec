/**
 * Bounding output (SPEC S2.2): past a limit the middle is dropped and head and tail are kept;
 * lines of the dropped middle that look like failures are kept with their line numbers; a
 * note names how much was dropped and the spill file holding the whole output. Works on byte
 * strings (see `bytes.ts`) as a stream, so memory stays bounded by the limits, and serves
 * several limits (said's and shown's) from one pass over the bytes.
 *
 * @module
 */
import { utf8Boundary, utf8ByteString } from "./bytes.ts";

/** Words that make a line of the dropped middle worth keeping. */
const FAILURE =
  /\b(?:errors?|fail(?:s|ed|ure)?|panic(?:ked)?|traceback|fatal|exception|segmentation fault|abort(?:ed)?|denied|assert(?:ion)?)\b/gi;

/** Bytes reserved for the note line. */
const NOTE_RESERVE = 320;
/** At most this many bytes of one failure-looking line are kept. */
const FAILURE_LINE_BYTES = 200;
/** At most this many failure-looking lines are remembered (the first ones). */
const MAX_FAILURES = 256;
/** At most this much of an unfinished line is kept for the failure search. */
const PARTIAL_BYTES = 300;

interface FailureLine {
  /** 1-based line number in the whole output. */
  line: number;
  text: string;
}

/** The outcome of bounding one stream to one limit. */
export interface Bounded {
  /** The kept text as a byte string: all of it, or head + note + failure lines + tail. */
  text: string;
  /** Whether anything was dropped. */
  cut: boolean;
  /** The whole output's size in bytes. */
  totalBytes: number;
  /** Bytes dropped from the middle. */
  droppedBytes: number;
  /** Newlines dropped from the middle. */
  droppedLines: number;
}

interface View {
  limit: number;
  head: number;
  tail: number;
  failures: number;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Keeps the head and tail of a stream within each of several limits (bytes).
 *
 * Budget of a cut result: 45 % head, 40 % tail, the rest for failure-looking lines, less
 * {@link NOTE_RESERVE} bytes for the note. Cuts prefer line boundaries (when one lies in the
 * outer half of the kept part) and never split a UTF-8 sequence.
 */
export class Bounder {
  readonly #views: View[];
  readonly #maxLimit: number;
  readonly #maxHead: number;
  readonly #maxTail: number;
  #total = 0;
  #newlines = 0;
  /** Until the largest limit is passed: everything; afterwards: the largest head. */
  #head = "";
  #pastAll = false;
  /** After the largest limit is passed: the latest chunks, as received. */
  #tail: string[] = [];
  #tailBytes = 0;
  /** The end of the previous chunk after its last newline (at most 300 bytes). */
  #partial = "";
  #failures: FailureLine[] = [];
  #failuresMissed = false;

  /** @param limits the most bytes each kept text may have (each at least twice {@link NOTE_RESERVE}) */
  constructor(limits: readonly number[]) {
    this.#views = limits.map((raw) => {
      // The config's smallest limit is 1024 bytes, less the room run_tool keeps for a status
      // note: a floor any higher would let said pass its limit.
      const limit = Math.max(2 * NOTE_RESERVE, Math.floor(raw));
      const usable = limit - NOTE_RESERVE;
      const head = Math.floor(usable * 0.45);
      const tail = Math.floor(usable * 0.40);
      return { limit, head, tail, failures: usable - head - tail };
    });
    this.#maxLimit = Math.max(...this.#views.map((v) => v.limit));
    this.#maxHead = Math.max(...this.#views.map((v) => v.head));
    this.#maxTail = Math.max(...this.#views.map((v) => v.tail));
  }

  /** The bytes seen so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Whether the stream has passed the smallest limit, so some kept text will be cut. */
  get cut(): boolean {
    return this.#views.some((v) => this.#total > v.limit);
  }

  /** Takes the next chunk of the stream (a byte string). */
  push(chunk: string): void {
    if (chunk.length === 0) return;
    this.#total += chunk.length;
    this.#scan(chunk);
    if (!this.#pastAll) {
      this.#head += chunk;
      if (this.#head.length <= this.#maxLimit) return;
      this.#pastAll = true;
      const all = this.#head;
      this.#head = all.slice(0, this.#maxHead);
      this.#tail = [all.slice(this.#maxHead)];
      this.#tailBytes = this.#tail[0].length;
    } else {
      this.#tail.push(chunk);
      this.#tailBytes += chunk.length;
    }
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0].length >= this.#maxTail) {
      this.#tailBytes -= this.#tail.shift()!.length;
    }
  }

  /**
   * Counts a chunk's newlines and remembers failure-looking lines with their line numbers.
   * Only whole lines are searched: the unfinished last line waits for the next chunk (its
   * first 300 bytes), so a word split across chunks is still found.
   */
  #scan(chunk: string): void {
    const lastNewline = chunk.lastIndexOf("\n");
    if (lastNewline === -1) {
      if (this.#partial.length < PARTIAL_BYTES) {
        this.#partial += chunk.slice(0, PARTIAL_BYTES - this.#partial.length);
      }
      return;
    }
    const text = this.#partial + chunk.slice(0, lastNewline + 1);
    this.#partial = chunk.slice(lastNewline + 1, lastNewline + 1 + PARTIAL_BYTES);
    let line = this.#newlines;
    let counted = 0;
    if (!this.#failuresMissed) {
      FAILURE.lastIndex = 0;
      for (let m = FAILURE.exec(text); m !== null; m = FAILURE.exec(text)) {
        line += countNewlines(text, counted, m.index);
        counted = m.index;
        if (this.#failures.length >= MAX_FAILURES) {
          this.#failuresMissed = true;
          break;
        }
        const start = text.lastIndexOf("\n", m.index) + 1;
        const end = text.indexOf("\n", m.index);
        this.#failures.push({ line: line + 1, text: trimLine(text.slice(start, end)) });
        FAILURE.lastIndex = end + 1;
      }
    }
    this.#newlines = line + countNewlines(text, counted, text.length);
  }

  /**
   * Ends the stream and returns the kept text for each limit, in the constructor's order.
   *
   * @param spillPath the file that holds the whole output, named in the note (or null when
   *   no spill file could be written)
   * @param spillCut how the spill file was cut at its cap (`spill.ts` `spillCutNote`), when
   *   it was: the note then says the file holds only part of the output
   */
  finish(spillPath: string | null, spillCut?: string): Bounded[] {
    if (this.#partial !== "") {
      this.#scan("\n");
      this.#newlines--;
    }
    const tailText = this.#pastAll ? this.#tail.join("") : this.#head;
    const where = spillPath === null
      ? ""
      : spillCut
      ? `; ${spillCut} in ${spillPath}`
      : `; the whole output is in ${spillPath}`;
    return this.#views.map((view) => this.#finishView(view, tailText, where));
  }

  #finishView(view: View, tailText: string, where: string): Bounded {
    const total = this.#total;
    if (total <= view.limit) {
      return { text: this.#head, cut: false, totalBytes: total, droppedBytes: 0, droppedLines: 0 };
    }
    const headRaw = this.#head.slice(0, view.head);
    const head = headRaw.slice(0, headEnd(headRaw));
    const tailRaw = tailText.slice(-view.tail);
    const tail = tailRaw.slice(tailStart(tailRaw));
    const headLines = countNewlines(head, 0, head.length);
    const tailLines = countNewlines(tail, 0, tail.length);
    const tailFirstLine = this.#newlines - tailLines + 1;
    const droppedBytes = total - head.length - tail.length;
    const droppedLines = Math.max(0, this.#newlines - tailLines - headLines);
    // The note is a byte string like the rest: its own text is encoded, the quoted lines are
    // already bytes.
    let note = utf8ByteString(
      `[magi: ${droppedBytes} bytes (${droppedLines} lines) dropped from the middle of ` +
        `${total} bytes${where}]\n`,
    );
    const inMiddle = this.#failures.filter((f) => f.line > headLines && f.line < tailFirstLine);
    if (inMiddle.length > 0) {
      let lines = "";
      let kept = 0;
      for (const f of inMiddle) {
        const entry = `  line ${f.line}: ${f.text}\n`;
        if (lines.length + entry.length > view.failures) break;
        lines += entry;
        kept++;
      }
      note += "[magi: failure-looking lines from the dropped part]\n" + lines;
      if (kept < inMiddle.length || this.#failuresMissed) note += utf8ByteString("  … and more\n");
    }
    const text = head + (head.endsWith("\n") || head === "" ? "" : "\n") + note + tail;
    return { text, cut: true, totalBytes: total, droppedBytes, droppedLines };
  }
}

function trimLine(raw: string): string {
  const text = raw.replace(/\r$/, "");
  if (text.length <= FAILURE_LINE_BYTES) return text;
  return text.slice(0, utf8Boundary(text, FAILURE_LINE_BYTES)) + utf8ByteString("…");
}

/** Where the kept head ends: after a newline in its second half, else a UTF-8 boundary. */
function headEnd(head: string): number {
  const newline = head.lastIndexOf("\n");
  if (newline >= head.length / 2) return newline + 1;
  return utf8Boundary(head, head.length);
}

/** Where the kept tail starts: after a newline in its first half, else a UTF-8 boundary. */
function tailStart(tail: string): number {
  const newline = tail.indexOf("\n");
  if (newline !== -1 && newline < tail.length / 2) return newline + 1;
  let i = 0;
  while (i < 3 && i < tail.length) {
    const c = tail.charCodeAt(i);
    if (c < 0x80 || c > 0xbf) break;
    i++;
  }
  return i;
}
