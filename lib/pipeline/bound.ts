/**
 * Bounding output (SPEC S2.2): past a limit the middle is dropped and head and tail are kept;
 * lines of the dropped middle that look like failures are kept with their line numbers (the
 * strongest first: `FAIL`, `error:`, a traceback before a word in passing; "0 errors" is no
 * failure) and the text around the word found (a long line is cut around it); a note names how much was dropped and the spill file holding the whole output. Works on byte
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
/**
 * At most this many failure-looking lines are remembered: the first ones, a strong one
 * taking the place of the earliest weak one once they are this many.
 */
const MAX_FAILURES = 256;
/** At most this much of an unfinished line's start, and of its latest end, is kept for the search. */
const PARTIAL_BYTES = 300;
/** What stands for the unkept middle of a long unfinished line: "…" as UTF-8 bytes. */
const GAP = utf8ByteString("…");
/** Bytes of a long failure line kept before the word found. */
const BEFORE_MATCH = 60;

/** A count of none before the word ("0 errors", "no failures") or after it ("failed: 0"). */
const NONE_BEFORE = /(?:^|[^\w.])(?:0|no|zero|without)\s+(?:\w+\s+)?$/i;
const NONE_AFTER = /^\s*[:=]?\s*0(?![\w.])/;
/** Words that are a failure wherever they stand. */
const STRONG_WORD = /^(?:traceback|panic(?:ked)?|fatal|segmentation fault)$/i;

interface FailureLine {
  /** 1-based line number in the whole output. */
  line: number;
  text: string;
  /** 2: a failure by its form (`FAIL`, `error:`, `Traceback`); 1: the word in passing. */
  score: number;
}

/**
 * How strongly the match `word` at `at` in `text` (its line from `start`) says "failure": 0
 * for a count of none ("0 errors", "failed: 0"), 2 for an upper-case word, a word followed by
 * `:` or a word such as `Traceback`, else 1.
 */
function failureScore(text: string, start: number, at: number, word: string): number {
  const before = text.slice(Math.max(start, at - 40), at);
  const after = text.slice(at + word.length, at + word.length + 20);
  if (NONE_BEFORE.test(before) || NONE_AFTER.test(after)) return 0;
  if (STRONG_WORD.test(word) || after.startsWith(":")) return 2;
  return word.length >= 4 && word === word.toUpperCase() ? 2 : 1;
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
  /** The latest 300 bytes of the unfinished line. */
  #partialEnd = "";
  /** The unfinished line's length so far (bytes). */
  #partialLength = 0;
  /** Past `#partial`: the text around the first failure word of the unfinished line. */
  #partialHit: Piece | undefined;
  /** Bytes the hit's text still wants after the word (it ended with its piece). */
  #hitWants = 0;
  #failures: FailureLine[] = [];
  /** Indexes of `#failures` whose score is 1, earliest first (what a strong line replaces). */
  #weak: number[] = [];
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
   * first 300 bytes and its latest 300), so a word split across chunks is still found.
   */
  #scan(chunk: string): void {
    const lastNewline = chunk.lastIndexOf("\n");
    if (lastNewline === -1) {
      this.#keepPartial(chunk);
      return;
    }
    // A line longer than both pieces kept: "…" stands for its middle (no word runs across it).
    const unfinished = joinPieces([
      { at: 0, text: this.#partial },
      ...(this.#partialHit ? [this.#partialHit] : []),
      { at: this.#partialLength - this.#partialEnd.length, text: this.#partialEnd },
    ]);
    const text = unfinished + chunk.slice(0, lastNewline + 1);
    this.#partial = "";
    this.#partialEnd = "";
    this.#partialLength = 0;
    this.#partialHit = undefined;
    this.#hitWants = 0;
    this.#keepPartial(chunk.slice(lastNewline + 1));
    let line = this.#newlines;
    let counted = 0;
    if (!this.#failuresMissed || this.#weak.length > 0) {
      FAILURE.lastIndex = 0;
      for (let m = FAILURE.exec(text); m !== null; m = FAILURE.exec(text)) {
        const start = text.lastIndexOf("\n", m.index) + 1;
        const score = failureScore(text, start, m.index, m[0]);
        // A count of none: look further along the same line.
        if (score === 0) continue;
        line += countNewlines(text, counted, m.index);
        counted = m.index;
        const end = text.indexOf("\n", m.index);
        FAILURE.lastIndex = end + 1;
        const found = {
          line: line + 1,
          text: trimLine(text.slice(start, end), m.index - start),
          score,
        };
        if (this.#failures.length < MAX_FAILURES) {
          if (score === 1) this.#weak.push(this.#failures.length);
          this.#failures.push(found);
          continue;
        }
        this.#failuresMissed = true;
        if (score === 2 && this.#weak.length > 0) this.#failures[this.#weak.shift()!] = found;
        if (this.#weak.length === 0) break;
      }
    }
    this.#newlines = line + countNewlines(text, counted, text.length);
  }

  /**
   * Keeps the start, the latest end and the text around the first failure word of an
   * unfinished line (see {@link #scan}).
   */
  #keepPartial(piece: string): void {
    if (piece === "") return;
    let at = this.#partialLength;
    this.#partialLength += piece.length;
    const room = PARTIAL_BYTES - this.#partial.length;
    if (room > 0) {
      this.#partial += piece.slice(0, room);
      piece = piece.slice(room);
      at += room;
    }
    if (piece === "") return;
    if (this.#partialHit && this.#hitWants > 0) {
      this.#partialHit.text += piece.slice(0, this.#hitWants);
      this.#hitWants -= Math.min(piece.length, this.#hitWants);
    } else if (!this.#partialHit) {
      // With the end of the last piece, so a word split between two is found.
      const before = this.#partialEnd.slice(-40);
      const hit = hitWindow(before + piece);
      if (hit) {
        this.#partialHit = { at: at - before.length + hit.at, text: hit.text };
        this.#hitWants = hit.wants;
      }
    }
    this.#partialEnd = (this.#partialEnd + piece).slice(-PARTIAL_BYTES);
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
    if (this.#partial !== "" || this.#partialEnd !== "") {
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
      // The strongest lines first, earliest first among equals; shown in line order.
      const ranked = [...inMiddle].sort((a, b) => b.score - a.score || a.line - b.line);
      const chosen: FailureLine[] = [];
      let size = 0;
      for (const f of ranked) {
        const entry = `  line ${f.line}: ${f.text}\n`;
        if (size + entry.length > view.failures) continue;
        size += entry.length;
        chosen.push(f);
      }
      const lines = chosen.sort((a, b) => a.line - b.line)
        .map((f) => `  line ${f.line}: ${f.text}\n`).join("");
      note += "[magi: failure-looking lines from the dropped part]\n" + lines;
      if (chosen.length < inMiddle.length || this.#failuresMissed) {
        note += utf8ByteString("  … and more\n");
      }
    }
    const text = head + (head.endsWith("\n") || head === "" ? "" : "\n") + note + tail;
    return { text, cut: true, totalBytes: total, droppedBytes, droppedLines };
  }
}

/** Text at an offset (bytes) of one line. */
interface Piece {
  at: number;
  text: string;
}

/**
 * The text around the first failure word of `text` (not a count of none), at its offset, and
 * how many bytes past `text`'s end it would still take.
 */
function hitWindow(text: string): (Piece & { wants: number }) | undefined {
  const search = new RegExp(FAILURE.source, "gi");
  for (let m = search.exec(text); m !== null; m = search.exec(text)) {
    if (failureScore(text, 0, m.index, m[0]) === 0) continue;
    const at = Math.max(0, m.index - BEFORE_MATCH);
    const end = m.index + FAILURE_LINE_BYTES;
    return { at, text: text.slice(at, end), wants: Math.max(0, end - text.length) };
  }
  return undefined;
}

/**
 * Pieces of one line joined in order, each byte once; {@link GAP} stands where bytes between
 * two pieces were not kept (no word runs across it).
 */
function joinPieces(pieces: Piece[]): string {
  let out = "";
  let end = 0;
  for (const p of [...pieces].sort((a, b) => a.at - b.at)) {
    if (p.text === "" || p.at + p.text.length <= end) continue;
    if (p.at > end) out += GAP;
    out += p.text.slice(Math.max(0, end - p.at));
    end = p.at + p.text.length;
  }
  return out;
}

/**
 * A failure line as kept: whole up to {@link FAILURE_LINE_BYTES}, else that much around the
 * word found at `at` (from {@link BEFORE_MATCH} bytes before it), with `…` where it was cut.
 */
function trimLine(raw: string, at = 0): string {
  const text = raw.replace(/\r$/, "");
  if (text.length <= FAILURE_LINE_BYTES) return text;
  let from = Math.max(0, Math.min(at - BEFORE_MATCH, text.length - FAILURE_LINE_BYTES));
  // Not inside a UTF-8 sequence: step past continuation bytes.
  while (from > 0 && from < text.length && (text.charCodeAt(from) & 0xc0) === 0x80) from++;
  const rest = text.slice(from);
  const cut = rest.length > FAILURE_LINE_BYTES;
  const kept = cut ? rest.slice(0, utf8Boundary(rest, FAILURE_LINE_BYTES)) : rest;
  return (from > 0 ? utf8ByteString("…") : "") + kept + (cut ? utf8ByteString("…") : "");
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
