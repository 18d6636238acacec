/**
 * Finding many literal byte strings in a long byte string fast. With few patterns, one
 * regular expression of their alternation (the engine searches it well). With many, a
 * q-gram filter in front of that expression. Every pattern is at least 6 bytes long, so any occurrence contains
 * a 3-byte gram that starts at a position divisible by 4; only those positions are looked up
 * in a bit set of every gram of every pattern, and the expression runs only near a hit.
 * Ordinary output almost never hits, so the cost is one table look-up per 3 bytes instead of
 * one expression attempt per byte. Base64 and hex text, though, hits the grams of the
 * patterns' base64 and hex forms everywhere; so a pattern of 9 bytes or more, whose every
 * occurrence holds a 6-byte window starting at a probed position, counts as hit only when
 * the 6 bytes there are (by hash) one of its windows too.
 *
 * @module
 */

/** Gram length and the step between probed positions; patterns must be ≥ GRAM + STEP − 1. */
const GRAM = 3;
const STEP = 4;
/** The window checked for long patterns, which are at least WIDE + STEP − 1 bytes. */
const WIDE = 6;
const LONG = WIDE + STEP - 1;

/** A 24-bit hash of two grams (the 6 bytes of a window). */
function wideHash(first: number, second: number): number {
  return (Math.imul(first, 0x9e3779b1) ^ Math.imul(second, 0x85ebca77)) >>> 8;
}

import { fromByteString } from "./bytes.ts";

/**
 * Below this many patterns the engine's own search of one alternation is faster than the
 * filter (measured: a handful of patterns scan at several GB/s; 80 at about 200 MB/s, where
 * the filter keeps about 1 GB/s whatever their number).
 */
const FILTER_FROM = 24;

/** One occurrence found. */
export interface Found {
  index: number;
  form: string;
}

function escapeForRegExp(form: string): string {
  let out = "";
  for (let i = 0; i < form.length; i++) {
    const c = form.charCodeAt(i);
    const isWord = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    out += isWord ? form[i] : "\\x" + c.toString(16).padStart(2, "0");
  }
  return out;
}

function gramAt(text: string, i: number): number {
  return (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8) | text.charCodeAt(i + 2);
}

/** A set of byte-string patterns (each at least 6 bytes) to search for. */
export class FormSearch {
  readonly #pattern: RegExp;
  /** The grams of all patterns. */
  readonly #grams: Uint32Array | undefined;
  /** The grams of the patterns shorter than {@link LONG}, when there are such. */
  readonly #shortGrams: Uint32Array | undefined;
  /** The hashes of the 6-byte windows of the longer patterns. */
  readonly #windows: Uint32Array | undefined;
  #bytes = new Uint8Array(0);
  /** The buffer of {@link bytesOf}, apart so that searches of other texts keep it whole. */
  #given = new Uint8Array(0);
  /** Length of the longest pattern. */
  readonly longest: number;

  /** @param forms byte strings (characters 0–255), each at least 6 long */
  constructor(forms: readonly string[]) {
    const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
    if (sorted.some((f) => f.length < GRAM + STEP - 1)) {
      throw new RangeError(`Cannot search for forms shorter than ${GRAM + STEP - 1} bytes`);
    }
    this.longest = sorted[0]?.length ?? 0;
    this.#pattern = new RegExp(sorted.map(escapeForRegExp).join("|") || "(?!)", "g");
    if (sorted.length <= FILTER_FROM) return;
    this.#grams = new Uint32Array(1 << 19);
    this.#windows = new Uint32Array(1 << 19);
    if (sorted.some((form) => form.length < LONG)) this.#shortGrams = new Uint32Array(1 << 19);
    for (const form of sorted) {
      const long = form.length >= LONG;
      for (let i = 0; i + GRAM <= form.length; i++) {
        const g = gramAt(form, i);
        this.#grams[g >>> 5] |= 1 << (g & 31);
        if (!long) this.#shortGrams![g >>> 5] |= 1 << (g & 31);
        if (long && i + WIDE <= form.length) {
          const h = wideHash(g, gramAt(form, i + GRAM));
          this.#windows[h >>> 5] |= 1 << (h & 31);
        }
      }
    }
  }

  /**
   * `text` as bytes, for {@link findAll} and other scans of the text, in a buffer of this
   * search that the next call of `bytesOf` reuses (searches meanwhile leave it alone).
   */
  bytesOf(text: string): Uint8Array {
    if (this.#given.length < text.length) this.#given = new Uint8Array(text.length);
    return fromByteString(text, this.#given);
  }

  /**
   * Every occurrence in `text`, left to right, not overlapping (at one position the longest
   * pattern wins).
   *
   * @param bytes `text` as bytes, when the caller has them already
   */
  findAll(text: string, bytes?: Uint8Array): Found[] {
    const found: Found[] = [];
    if (!this.#grams) {
      const pattern = this.#pattern;
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        found.push({ index: m.index, form: m[0] });
      }
      return found;
    }
    const reach = this.longest - GRAM;
    let regionStart = -1;
    let regionEnd = -1;
    const flush = () => {
      if (regionStart < 0) return;
      const from = Math.max(regionStart, found.length ? lastEnd(found) : 0);
      const window = text.slice(from, Math.min(text.length, regionEnd + this.longest));
      const pattern = this.#pattern;
      pattern.lastIndex = 0;
      for (let m = pattern.exec(window); m !== null; m = pattern.exec(window)) {
        if (from + m.index >= regionEnd) break;
        found.push({ index: from + m.index, form: m[0] });
      }
    };
    const grams = this.#grams;
    const shortGrams = this.#shortGrams;
    const windows = this.#windows!;
    // Typed-array reads are about twice as fast as reading the string's characters.
    if (!bytes) {
      if (this.#bytes.length < text.length) this.#bytes = new Uint8Array(text.length);
      bytes = fromByteString(text, this.#bytes);
    }
    for (let p = 0; p + GRAM <= bytes.length; p += STEP) {
      const g = (bytes[p] << 16) | (bytes[p + 1] << 8) | bytes[p + 2];
      if ((grams[g >>> 5] & (1 << (g & 31))) === 0) continue;
      // Unless a short pattern holds the gram, the window must be a long pattern's too.
      const short = shortGrams !== undefined && (shortGrams[g >>> 5] & (1 << (g & 31))) !== 0;
      if (!short && p + WIDE <= bytes.length) {
        const h = wideHash(g, (bytes[p + 3] << 16) | (bytes[p + 4] << 8) | bytes[p + 5]);
        if ((windows[h >>> 5] & (1 << (h & 31))) === 0) continue;
      }
      // An occurrence holding this gram starts in [p - reach, p].
      const start = Math.max(0, p - reach);
      if (start <= regionEnd) {
        regionEnd = p + 1;
      } else {
        flush();
        regionStart = start;
        regionEnd = p + 1;
      }
    }
    flush();
    return found;
  }
}

function lastEnd(found: Found[]): number {
  const last = found[found.length - 1];
  return last.index + last.form.length;
}
