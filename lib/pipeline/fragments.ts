/**
 * Finding fragments of secrets: any run of at least {@link FRAGMENT} consecutive characters
 * of a secret's skeleton (see `skeleton.ts`), so that a prefix, a half, a `cut -c` or
 * `fold` piece is caught. Every run that long holds a {@link PROBE}-byte window starting at
 * a position divisible by the step (`FRAGMENT - PROBE + 1`); only those windows are looked
 * up (a bit set of their first three bytes, one of their hashes, then a table of where each
 * window lies in which secret), and a hit is grown to the whole run both ways.
 *
 * Fragments that could be ordinary text are not indexed: a window counts only when its
 * fragment of {@link FRAGMENT} characters has at least 7 in 12 distinct characters and holds
 * a digit or a symbol (not only the separators of words: space `.` `,` `_` `/` `-`) and a
 * character that is not a digit (numbers, dates and times are everywhere). So a secret of
 * low entropy — `aaaaaaaaaaaa`, `correct-horse-battery-staple`, `20241231235959` — is masked
 * only whole.
 *
 * @module
 */

import { fromByteString } from "./bytes.ts";

/**
 * The fewest characters of a secret that count as a fragment of it. Chosen by measurement
 * (`deno task bench`, the false-positive corpus: 49 MiB of sources, git history and dumps
 * against 100 realistic secrets): 0 hits from 8 up; 10 leaves a margin.
 */
export const FRAGMENT = 10;

/** The window looked up, in bytes; fragments are at least this long. */
const PROBE = 8;

/** The share of distinct characters a fragment needs to be indexed (7 of 12). */
export const MIN_DISTINCT = 7 / 12;

/** A run of a secret's characters found in a text. */
export interface FragmentFound {
  /** Where it starts and ends (exclusive) in the text searched. */
  index: number;
  end: number;
  /** Which secret (an index into the list given to the search). */
  secret: number;
  /** Whether the run reaches the end of the text and the secret goes on after it. */
  open: boolean;
}

/** A hash of the PROBE (8) bytes at `i`: two 32-bit words, mixed. */
function windowHash(b: Uint8Array, i: number): number {
  const lo = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
  const hi = b[i + 4] | (b[i + 5] << 8) | (b[i + 6] << 16) | (b[i + 7] << 24);
  const h = Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi ^ (lo >>> 15), 0x85ebca77);
  return (h ^ (h >>> 13)) >>> 0;
}

/** Whether a fragment of a secret's skeleton looks random enough to be indexed. */
export function fragmentWorthy(fragment: string): boolean {
  // Words, alone or joined by the usual separators, are not random.
  if (!/[^a-z\u00e0-\u00fe .,_/-]/.test(fragment)) return false;
  if (/^[0-9 .,:_/+-]*$/.test(fragment)) return false;
  return new Set(fragment).size >= Math.ceil(fragment.length * MIN_DISTINCT);
}

/** A set of secrets' skeletons whose fragments are searched for. */
export class FragmentSearch {
  readonly #secrets: string[];
  readonly #bits = new Uint32Array(1 << 16);
  /** The first three bytes of every window, as a bit set of 24-bit grams. */
  readonly #grams = new Uint32Array(1 << 19);
  /** Window hash → [secret, offset] pairs. */
  readonly #where = new Map<number, number[]>();
  /** The fewest characters that count as a fragment. */
  readonly #length: number;
  /** The step between probed positions: every run of #length bytes holds a probed window. */
  readonly #step: number;

  /**
   * @param skeletons each secret's skeleton; those shorter than `length` are left out
   * @param length the fewest characters that count as a fragment (at least 8; the bench
   *   measures others than {@link FRAGMENT})
   * @param worthy which fragments are indexed (default {@link fragmentWorthy})
   */
  constructor(
    skeletons: readonly string[],
    length = FRAGMENT,
    worthy: (fragment: string) => boolean = fragmentWorthy,
  ) {
    if (length < PROBE) throw new RangeError(`Cannot search for fragments under ${PROBE} bytes`);
    this.#length = length;
    this.#step = length - PROBE + 1;
    this.#secrets = [...skeletons];
    const index = (b: Uint8Array, n: number, w: number) => {
      const h = windowHash(b, w);
      const list = this.#where.get(h);
      if (list === undefined) this.#where.set(h, [n, w]);
      else if (!hasPair(list, n, w)) list.push(n, w);
      this.#bits[(h >>> 5) & 0xffff] |= 1 << (h & 31);
      const g = (b[w] << 16) | (b[w + 1] << 8) | b[w + 2];
      this.#grams[g >>> 5] |= 1 << (g & 31);
    };
    skeletons.forEach((s, n) => {
      const b = fromByteString(s);
      let next = 0;
      for (let o = 0; o + length <= s.length; o++) {
        if (!worthy(s.slice(o, o + length))) continue;
        // Every window inside a worthy fragment leads to it.
        for (let w = Math.max(o, next); w <= o + length - PROBE; w++) index(b, n, w);
        next = o + length - PROBE + 1;
      }
    });
  }

  /** Whether any fragment is indexed. */
  get empty(): boolean {
    return this.#where.size === 0;
  }

  /**
   * Every run of at least FRAGMENT characters of a secret in `text` (a skeleton), left to
   * right, the longest at each place, not overlapping.
   *
   * @param bytes `text` as bytes
   */
  findAll(text: string, bytes: Uint8Array): FragmentFound[] {
    const found: FragmentFound[] = [];
    let covered = 0;
    const bits = this.#bits;
    const step = this.#step;
    const last = bytes.length - PROBE;
    const grams = this.#grams;
    for (let p = 0; p <= last; p += step) {
      // The window's first three bytes must start some window: one look-up rules out most.
      const g = (bytes[p] << 16) | (bytes[p + 1] << 8) | bytes[p + 2];
      if ((grams[g >>> 5] & (1 << (g & 31))) === 0) continue;
      // windowHash, inlined: this loop is the whole cost of the search.
      const lo = bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24);
      const hi = bytes[p + 4] | (bytes[p + 5] << 8) | (bytes[p + 6] << 16) | (bytes[p + 7] << 24);
      let h = Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi ^ (lo >>> 15), 0x85ebca77);
      h = (h ^ (h >>> 13)) >>> 0;
      if ((bits[(h >>> 5) & 0xffff] & (1 << (h & 31))) === 0) continue;
      if (p + PROBE <= covered) continue;
      const list = this.#where.get(h);
      if (list === undefined) continue;
      let best: FragmentFound | undefined;
      for (let i = 0; i < list.length; i += 2) {
        const run = this.#grow(text, p, list[i], list[i + 1]);
        if (!run || run.end - run.index < this.#length) continue;
        if (!best || run.end - run.index > best.end - best.index) best = run;
      }
      if (!best) continue;
      if (best.index < covered) best.index = covered;
      if (best.end - best.index <= 0) continue;
      found.push(best);
      covered = best.end;
    }
    return found;
  }

  /** The run around text[p…] that matches secret n around offset o, if it is one. */
  #grow(text: string, p: number, n: number, o: number): FragmentFound | undefined {
    const s = this.#secrets[n];
    if (text.slice(p, p + PROBE) !== s.slice(o, o + PROBE)) return undefined;
    let back = 0;
    while (p - back > 0 && o - back > 0 && text[p - back - 1] === s[o - back - 1]) back++;
    let ahead = PROBE;
    while (p + ahead < text.length && o + ahead < s.length && text[p + ahead] === s[o + ahead]) {
      ahead++;
    }
    const end = p + ahead;
    return { index: p - back, end, secret: n, open: end === text.length && o + ahead < s.length };
  }
}

function hasPair(list: number[], n: number, w: number): boolean {
  for (let i = 0; i < list.length; i += 2) if (list[i] === n && list[i + 1] === w) return true;
  return false;
}
