/**
 * The skeleton of a byte string: what is left when everyday transformations are undone, so
 * that one search finds a secret however a program dressed it. The skeleton is the text in
 * lower case (ASCII and Latin-1 letters), without terminal escape sequences (CSI such as SGR
 * colours, OSC up to BEL or ST, the DCS, SOS, PM and APC strings up to ST, and two-byte ESC
 * sequences), without a character a backspace overstrikes (`k\bk`, nroff's bold as `man`
 * pipes it to a pager; `_\bk` underline; `x\b` that the next character hides), without line breaks (`\n`,
 * `\r`: wrapping at any column, `fold`) and the indentation after them, and without `\`, `'` and `"` (the escapes of shell
 * quoting — `printf %q`, `set -x`'s `'\''` —, of `repr` and of JSON, applied once or twice).
 *
 * The same function is applied to the forms searched for, so a form matches the skeleton of
 * any text that differs from it only by those artefacts. A {@link SkeletonMap} leads from a
 * position in the skeleton back to the byte it came from.
 *
 * @module
 */
import { fromByteString, toByteString } from "./bytes.ts";

/**
 * What the skeleton leaves out; each match is removed whole. Escape sequences are bounded
 * (an OSC, DCS, SOS, PM or APC string must end within 512 bytes, by BEL or ST — ST alone for
 * the last four, ECMA-48 — on its line), so a stray ESC cannot hide what follows it. A
 * character followed by a backspace is what a terminal overwrites with the next one. The text
 * is lower-cased first, so letters are matched in both cases (`ESC P` is `ESC p` there).
 */
const NOISE =
  // deno-lint-ignore no-control-regex
  /\x1b(?:\[[0-?]{0,32}[ -/]{0,8}[@-~]?|\][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)|[PXpx^_][^\x1b\n]{0,512}\x1b\\|[ -/]{0,8}[0-~]?)|\n[ \t]*|[\\'"\r]/g;

/**
 * NOISE and a character a backspace overstrikes: for text that holds a backspace only (an
 * alternative that can start anywhere makes the search try every position: 132 KB of JSON
 * took twice as long).
 */
const NOISE_BS = new RegExp(`${NOISE.source}|[^\\x08\\n]\\x08`, "g");

/** The expression for `text`: {@link NOISE_BS} where it holds a backspace. */
function noiseFor(text: string): RegExp {
  return text.includes("\b") ? NOISE_BS : NOISE;
}

/** The characters NOISE removes one by one. */
const SINGLE = /[\\'"\r\n]/g;

/**
 * The skeleton of a byte string (see the module comment).
 *
 * @example
 * ```ts
 * import { skeleton } from "./skeleton.ts";
 * skeleton("ab'\\''C\x1b[31mD\nef"); // "abcdef"
 * ```
 */
export function skeleton(text: string): string {
  const lower = text.toLowerCase();
  // Latin-1 lower-casing keeps the length; a guard in case an engine disagrees.
  const out = lower.length === text.length ? lower : text;
  if (!onlySingles(out)) return out.replace(noiseFor(out), "");
  // Without escapes and indented lines, NOISE removes single characters: a character class
  // is about twice as fast as the whole expression.
  return out.replace(SINGLE, "");
}

/**
 * Whether the skeleton of `text` only leaves out single characters (no escape sequence, no
 * indentation after a line break), so that it still holds every form as written.
 */
export function onlySingles(text: string): boolean {
  return !text.includes("\x1b") && !text.includes("\b") && !text.includes("\n ") &&
    !text.includes("\n\t");
}

/** The most separator characters between two pieces that the spread skeleton joins. */
export const MAX_SEPARATOR = 4;

/** 1 for ASCII characters that are neither letters nor digits: what may separate pieces. */
const SEP = new Uint8Array(256);
/** Each byte lower-cased (ASCII letters). */
const LOWER = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  SEP[c] = c < 128 && !/[A-Za-z0-9]/.test(String.fromCharCode(c)) ? 1 : 0;
  // Quotes and backslashes, which the skeleton leaves out too, do not count.
  if (c === 34 || c === 39 || c === 92) SEP[c] = 2;
  LOWER[c] = c >= 65 && c <= 90 ? c + 32 : c;
  // A UTF-8 lead byte: its character is looked at (see `unicodeClass`).
  if (c >= 0xc2 && c <= 0xf4) SEP[c] = 3;
}

/** Classes of a non-ASCII character in the spread skeleton (`unicodeClass`). */
const KEEP = 0;
const DROP = 1;
const SEPARATE = 2;
const LETTER = 3;

/** Each BMP character's class (`unicodeClass`), worked out when first seen; 0 = not yet. */
const BMP = new Int32Array(0x10000);
const ASTRAL = new Map<number, number>();
const INVISIBLE = /^[\p{Cf}\p{Mn}\p{Me}]$/u;
const MARKS = /\p{Mn}/gu;

/**
 * What the spread skeleton makes of the code point `cp`, as `class | ascii << 8`: a format
 * character (zero-width space and joiners, soft hyphen, BOM, bidi marks) or a combining mark
 * is dropped (it separates nothing on screen); a character whose compatibility form without
 * marks is one ASCII letter or digit (fullwidth `ｋ`, `𝐤`, `é`) is that letter, lower-cased;
 * one that is ASCII otherwise (no-break and other spaces, fullwidth punctuation) is a
 * separator; any other stays as it is.
 */
function classOf(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (INVISIBLE.test(ch)) return DROP;
  const plain = ch.normalize("NFKD").replace(MARKS, "");
  if (plain.length !== 1 || plain.charCodeAt(0) >= 128) return KEEP;
  const a = plain.toLowerCase().charCodeAt(0);
  return SEP[a] === 0 ? LETTER | (a << 8) : SEPARATE;
}

/**
 * The character whose UTF-8 starts at `b[i]` (a lead byte): `class | ascii << 8 | length <<
 * 16`; an invalid sequence is one byte kept.
 */
function unicodeAt(b: Uint8Array, i: number, n: number): number {
  const c = b[i];
  const len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  if (i + len > n) return KEEP | (1 << 16);
  let cp = c & (len === 2 ? 0x1f : len === 3 ? 0x0f : 0x07);
  for (let t = 1; t < len; t++) {
    const x = b[i + t];
    if ((x & 0xc0) !== 0x80) return KEEP | (1 << 16);
    cp = (cp << 6) | (x & 0x3f);
  }
  // Past Unicode's last code point (`F4 90 80 80` and up): no character, one byte kept.
  if (cp > 0x10ffff) return KEEP | (1 << 16);
  let cls: number;
  if (cp < 0x10000) {
    cls = BMP[cp];
    if (cls === 0) cls = BMP[cp] = classOf(cp) | (1 << 24);
  } else {
    cls = ASTRAL.get(cp) ?? classOf(cp) | (1 << 24);
    ASTRAL.set(cp, cls);
  }
  return (cls & 0xffff) | (len << 16);
}

/**
 * `end` (an offset in the byte string `text`) moved past the rest of a character it cuts and
 * past the invisible characters after it (combining marks, zero-width ones), so that a span
 * the spread skeleton found covers them.
 */
export function spreadEnd(text: string, end: number): number {
  const n = text.length;
  let i = end;
  while (i < n && (text.charCodeAt(i) & 0xc0) === 0x80) i++;
  const b = new Uint8Array(4);
  while (i < n && SEP[text.charCodeAt(i)] === 3) {
    const len = Math.min(4, n - i);
    for (let t = 0; t < len; t++) b[t] = text.charCodeAt(i + t);
    const u = unicodeAt(b, 0, len);
    if ((u & 0xff) !== DROP) break;
    i += u >>> 16;
  }
  return i;
}

/**
 * The length of a line-number prefix after the line break at `b[i]` (`cat -n`'s and `nl`'s
 * `     2\t`, `grep -n`'s `2:`), 0 if there is none.
 */
function numberPrefix(b: Uint8Array, i: number, n: number): number {
  let j = i + 1;
  while (j < n && (b[j] === 32 || b[j] === 9) && j - i < 12) j++;
  const digits = j;
  while (j < n && b[j] >= 48 && b[j] <= 57 && j - digits < 9) j++;
  if (j === digits || j >= n || (b[j] !== 9 && b[j] !== 58)) return 0;
  return j + 1 - i;
}

/** A spread skeleton and, for each of its characters, its offset in the text. */
export interface Spread {
  text: string;
  offsets: Int32Array;
}

/**
 * The _spread_ skeleton of a byte string: lower case (ASCII), without any run of 1 to
 * {@link MAX_SEPARATOR} ASCII characters that are neither letters nor digits (`,` ` ` `.`
 * `+` a tab, a line break and its indentation; quotes and backslashes, always left out, do not
 * count), so that a value cut into pieces with a
 * separator between them (`fold -w8 | paste -sd,`, `sed 's/./& /g'`) reads as one. Longer
 * runs stay: pieces that far apart are not joined.
 *
 * @example
 * ```ts
 * import { spread } from "./skeleton.ts";
 * spread("k9Jx,2Qm7 'Lp'+'4V'"); // "k9jx2qm7lp4v"
 * ```
 */
export function spread(text: string): string {
  return spreadWithOffsets(text, false).text;
}

/** Buffers reused by {@link spreadWithOffsets} (the results are copies). */
let inBytes = new Uint8Array(0);
let outBytes = new Uint8Array(0);

/** The spread skeleton of `text` with the offsets of its characters (when `offsets` is set). */
export function spreadWithOffsets(text: string, offsets = true): Spread {
  const n = text.length;
  if (inBytes.length < n) {
    inBytes = new Uint8Array(n);
    outBytes = new Uint8Array(n);
  }
  const b = fromByteString(text, inBytes);
  const out = outBytes;
  const at = new Int32Array(offsets ? n : 0);
  const sep = SEP;
  const lower = LOWER;
  let k = 0;
  let i = 0;
  while (i < n) {
    const c = b[i];
    const s = sep[c];
    if (s === 0) {
      out[k] = lower[c];
      if (offsets) at[k] = i;
      k++;
      i++;
      continue;
    }
    if (s === 3) {
      const u = unicodeAt(b, i, n);
      const cls = u & 0xff;
      const len = u >>> 16;
      if (cls === LETTER) {
        out[k] = (u >>> 8) & 0xff;
        if (offsets) at[k] = i;
        k++;
        i += len;
        continue;
      }
      if (cls === KEEP) {
        for (let t = i; t < i + len; t++) {
          out[k] = b[t];
          if (offsets) at[k] = t;
          k++;
        }
        i += len;
        continue;
      }
    }
    // A run of separators: ASCII ones, line-number prefixes after a line break (one each),
    // spaces and invisible characters.
    let j = i;
    let counted = 0;
    while (j < n) {
      const x = sep[b[j]];
      if (x === 0) break;
      if (x === 3) {
        const u = unicodeAt(b, j, n);
        const cls = u & 0xff;
        if (cls === LETTER || cls === KEEP) break;
        if (cls === SEPARATE) counted++;
        j += u >>> 16;
        continue;
      }
      if (x === 1) counted++;
      j += b[j] === 10 ? numberPrefix(b, j, n) || 1 : 1;
    }
    if (counted > MAX_SEPARATOR) {
      for (let t = i; t < j; t++) {
        if (sep[b[t]] === 2) continue;
        out[k] = b[t];
        if (offsets) at[k] = t;
        k++;
      }
    }
    i = j;
  }
  return { text: toByteString(out.subarray(0, k)), offsets: at };
}

/** Leads from skeleton positions back to byte offsets of the text it was made of. */
export class SkeletonMap {
  /** Start offsets (in the text) of the runs of kept bytes. */
  readonly #starts: number[] = [];
  /** Where each run starts in the skeleton. */
  readonly #at: number[] = [];

  /** @param text the byte string whose skeleton positions are to be mapped */
  constructor(text: string) {
    let kept = 0;
    let pos = 0;
    const noise = noiseFor(text);
    noise.lastIndex = 0;
    for (let m = noise.exec(text); m !== null; m = noise.exec(text)) {
      if (m.index > pos) {
        this.#starts.push(pos);
        this.#at.push(kept);
        kept += m.index - pos;
      }
      pos = m.index + m[0].length;
    }
    if (text.length > pos) {
      this.#starts.push(pos);
      this.#at.push(kept);
    }
  }

  /** The byte offset in the text of the skeleton's character at `k` (which must exist). */
  offset(k: number): number {
    let lo = 0;
    let hi = this.#at.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#at[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return this.#starts[lo] + (k - this.#at[lo]);
  }
}
