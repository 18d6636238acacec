/**
 * Finding fragments of secrets: any run of at least {@link FRAGMENT} consecutive characters
 * of a secret's skeleton (see `skeleton.ts`), so that a prefix, a half, a `cut -c` or
 * `fold` piece is caught. Every run that long holds a {@link PROBE}-byte window starting at
 * a position divisible by the step (`FRAGMENT - PROBE + 1`); only those windows are looked
 * up (a bit set, then a table of where each window lies in which secret), and a hit is
 * grown to the whole run both ways.
 *
 * Fragments that could be ordinary text are not indexed: a window counts only when its
 * fragment of {@link FRAGMENT} characters has at least {@link MIN_DISTINCT} distinct
 * characters and is not made of letters alone (a word, or words run together). So a secret
 * of low entropy — `aaaaaaaaaaaa`, `correcthorsebatterystaple` — is masked only whole.
 *
 * @module
 */

/**
 * The fewest characters of a secret that count as a fragment of it. Chosen by measurement
 * (`deno task bench`: the false-positive corpus): 0 hits at 10 and above.
 */
export const FRAGMENT = 12;

/** The window looked up, in bytes. */
const PROBE = 8;
/** The step between probed positions: every run of FRAGMENT bytes holds a probed window. */
const STEP = FRAGMENT - PROBE + 1;

/** The fewest distinct characters a fragment of FRAGMENT characters needs to be indexed. */
export const MIN_DISTINCT = 7;

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

function windowHash(s: string | Uint8Array, i: number): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < PROBE; k++) {
    const c = typeof s === "string" ? s.charCodeAt(i + k) : s[i + k];
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

/** Whether a fragment of a secret's skeleton looks random enough to be indexed. */
export function fragmentWorthy(fragment: string): boolean {
  if (/^[a-z\u00e0-\u00fe]*$/.test(fragment)) return false;
  return new Set(fragment).size >= MIN_DISTINCT;
}

/** A set of secrets' skeletons whose fragments are searched for. */
export class FragmentSearch {
  readonly #secrets: string[];
  readonly #bits = new Uint32Array(1 << 16);
  /** Window hash → [secret, offset] pairs. */
  readonly #where = new Map<number, number[]>();

  /** @param skeletons each secret's skeleton; those shorter than FRAGMENT are left out */
  constructor(skeletons: readonly string[]) {
    this.#secrets = [...skeletons];
    skeletons.forEach((s, n) => {
      for (let o = 0; o + FRAGMENT <= s.length; o++) {
        if (!fragmentWorthy(s.slice(o, o + FRAGMENT))) continue;
        // Every window inside a worthy fragment leads to it.
        for (let w = o; w <= o + FRAGMENT - PROBE; w++) {
          const h = windowHash(s, w);
          const list = this.#where.get(h);
          if (list === undefined) this.#where.set(h, [n, w]);
          else if (!hasPair(list, n, w)) list.push(n, w);
          this.#bits[(h >>> 5) & 0xffff] |= 1 << (h & 31);
        }
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
    for (let p = 0; p + PROBE <= bytes.length; p += STEP) {
      if (p + PROBE <= covered) continue;
      const h = windowHash(bytes, p);
      if ((bits[(h >>> 5) & 0xffff] & (1 << (h & 31))) === 0) continue;
      const list = this.#where.get(h);
      if (list === undefined) continue;
      let best: FragmentFound | undefined;
      for (let i = 0; i < list.length; i += 2) {
        const run = this.#grow(text, p, list[i], list[i + 1]);
        if (run && (!best || run.end - run.index > best.end - best.index)) best = run;
      }
      if (!best || best.end - best.index < FRAGMENT) continue;
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
