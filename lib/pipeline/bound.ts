/**
 * Bounding output (SPEC S2.2): past a limit the middle is dropped and head and tail are kept;
 * lines of the dropped middle that look like failures are kept with their line numbers; a
 * note names how much was dropped and the spill file holding the whole output. Works on byte
 * strings (see `bytes.ts`) as a stream, so memory stays bounded by the limit.
 *
 * @module
 */
import { utf8Boundary } from "./bytes.ts";

/** Words that make a line of the dropped middle worth keeping. */
const FAILURE =
  /error|fail|panic|traceback|fatal|exception|segmentation fault|abort|denied|assert/gi;

/** Bytes reserved for the note line. */
const NOTE_RESERVE = 320;
/** At most this many bytes of one failure-looking line are kept. */
const FAILURE_LINE_BYTES = 200;

interface FailureLine {
  /** 1-based line number in the whole output. */
  line: number;
  text: string;
}

/** The outcome of bounding one stream. */
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

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Keeps the head and tail of a stream within `limit` bytes.
 *
 * Budget of a cut result: 45 % head, 40 % tail, the rest for failure-looking lines, less
 * {@link NOTE_RESERVE} bytes for the note. Cuts prefer line boundaries (when one lies in the
 * outer half of the kept part) and never split a UTF-8 sequence.
 */
export class Bounder {
  readonly #limit: number;
  readonly #headBudget: number;
  readonly #tailBudget: number;
  readonly #failureBudget: number;
  #total = 0;
  /** Until the limit is passed: everything; afterwards: the head. */
  #head = "";
  #cut = false;
  /** After a cut: the latest chunks, as received (no concatenation, so no garbage). */
  #tail: string[] = [];
  #tailBytes = 0;
  /** Newlines before the first byte not yet scanned (the start of #tail after a cut). */
  #linesBefore = 0;
  /** The end of the last scanned segment after its last newline (at most 300 bytes). */
  #partial = "";
  #failures: FailureLine[] = [];
  #failureBytes = 0;
  #failuresLeftOut = 0;

  /** @param limit the most bytes the kept text may have (at least 1024) */
  constructor(limit: number) {
    this.#limit = Math.max(1024, Math.floor(limit));
    const usable = this.#limit - NOTE_RESERVE;
    this.#headBudget = Math.floor(usable * 0.45);
    this.#tailBudget = Math.floor(usable * 0.40);
    this.#failureBudget = usable - this.#headBudget - this.#tailBudget;
  }

  /** The bytes seen so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Whether the stream has passed the limit, so the kept text will be cut. */
  get cut(): boolean {
    return this.#cut;
  }

  /** Takes the next chunk of the stream (a byte string). */
  push(chunk: string): void {
    if (chunk.length === 0) return;
    this.#total += chunk.length;
    if (!this.#cut) {
      this.#head += chunk;
      if (this.#head.length <= this.#limit) return;
      this.#cut = true;
      const all = this.#head;
      this.#head = all.slice(0, this.#headBudget);
      this.#linesBefore = countNewlines(this.#head, 0, this.#head.length);
      this.#partial = this.#head.slice(this.#head.lastIndexOf("\n") + 1).slice(0, 300);
      this.#tail = [all.slice(this.#headBudget)];
      this.#tailBytes = this.#tail[0].length;
    } else {
      this.#tail.push(chunk);
      this.#tailBytes += chunk.length;
    }
    // Whole chunks that the tail no longer needs go to the scanned middle.
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0].length >= this.#tailBudget) {
      const dropped = this.#tail.shift()!;
      this.#tailBytes -= dropped.length;
      this.#scan(dropped);
    }
  }

  /** Joins the tail and moves all but its last tail-budget bytes into the scanned middle. */
  #evict(): string {
    let tail = this.#tail.join("");
    const keepFrom = tail.length - this.#tailBudget;
    if (keepFrom > 0) {
      this.#scan(tail.slice(0, keepFrom));
      tail = tail.slice(keepFrom);
    }
    this.#tail = [tail];
    this.#tailBytes = tail.length;
    return tail;
  }

  /** Scans a dropped segment for failure-looking lines and counts its newlines. */
  #scan(segment: string): void {
    let counted = 0;
    let line = this.#linesBefore;
    if (this.#failureBytes < this.#failureBudget) {
      FAILURE.lastIndex = 0;
      for (let m = FAILURE.exec(segment); m !== null; m = FAILURE.exec(segment)) {
        line += countNewlines(segment, counted, m.index);
        counted = m.index;
        const start = segment.lastIndexOf("\n", m.index) + 1;
        let end = segment.indexOf("\n", m.index);
        if (end === -1) end = segment.length;
        const text = (start === 0 ? this.#partial : "") + segment.slice(start, end);
        this.#addFailure(line + 1, text);
        FAILURE.lastIndex = end + 1;
        if (this.#failureBytes >= this.#failureBudget) break;
      }
    }
    line += countNewlines(segment, counted, segment.length);
    this.#linesBefore = line;
    const lastNewline = segment.lastIndexOf("\n");
    this.#partial = lastNewline === -1
      ? (this.#partial + segment).slice(0, 300)
      : segment.slice(lastNewline + 1, lastNewline + 301);
  }

  #addFailure(line: number, raw: string): void {
    let text = raw.replace(/\r$/, "");
    if (text.length > FAILURE_LINE_BYTES) {
      text = text.slice(0, utf8Boundary(text, FAILURE_LINE_BYTES)) + "…";
    }
    const entry = `  line ${line}: ${text}\n`;
    if (this.#failureBytes + entry.length > this.#failureBudget) {
      this.#failuresLeftOut++;
      this.#failureBytes = this.#failureBudget;
      return;
    }
    this.#failures.push({ line, text });
    this.#failureBytes += entry.length;
  }

  /**
   * Ends the stream and returns the kept text.
   *
   * @param spillPath the file that holds the whole output, named in the note (or null when
   *   no spill file could be written)
   */
  finish(spillPath: string | null): Bounded {
    if (!this.#cut) {
      return {
        text: this.#head,
        cut: false,
        totalBytes: this.#total,
        droppedBytes: 0,
        droppedLines: 0,
      };
    }
    const whole = this.#evict();
    const tailStartOffset = this.#tailStart(whole);
    const tail = whole.slice(tailStartOffset);
    const tailFirstLine = this.#linesBefore + countNewlines(whole, 0, tailStartOffset) + 1;
    const head = this.#head.slice(0, this.#headEnd(this.#head));
    const headLines = countNewlines(head, 0, head.length);
    const droppedBytes = this.#total - head.length - tail.length;
    const droppedLines = Math.max(0, tailFirstLine - 1 - headLines);
    const failures = this.#failures.filter((f) => f.line > headLines && f.line < tailFirstLine);
    const where = spillPath ? `; the whole output is in ${spillPath}` : "";
    let note = `[magi: ${droppedBytes} bytes (${droppedLines} lines) dropped from the middle of ` +
      `${this.#total} bytes${where}]\n`;
    if (failures.length > 0) {
      note += "[magi: failure-looking lines from the dropped part]\n";
      note += failures.map((f) => `  line ${f.line}: ${f.text}\n`).join("");
      if (this.#failuresLeftOut > 0) note += `  … ${this.#failuresLeftOut} more\n`;
    }
    const text = head + (head.endsWith("\n") || head === "" ? "" : "\n") + note + tail;
    return { text, cut: true, totalBytes: this.#total, droppedBytes, droppedLines };
  }

  /** Where the kept head ends: after a newline in its second half, else a UTF-8 boundary. */
  #headEnd(head: string): number {
    const newline = head.lastIndexOf("\n");
    if (newline >= head.length / 2) return newline + 1;
    return utf8Boundary(head, head.length);
  }

  /** Where the kept tail starts: after a newline in its first half, else a UTF-8 boundary. */
  #tailStart(tail: string): number {
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
}
