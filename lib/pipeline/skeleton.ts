/**
 * The skeleton of a byte string: what is left when everyday transformations are undone, so
 * that one search finds a secret however a program dressed it. The skeleton is the text in
 * lower case (ASCII and Latin-1 letters), without terminal escape sequences (CSI such as SGR
 * colours, OSC up to BEL or ST, and two-byte ESC sequences), without line breaks (`\n`,
 * `\r`: wrapping at any column, `fold`) and the indentation after them, and without `\`, `'` and `"` (the escapes of shell
 * quoting — `printf %q`, `set -x`'s `'\''` —, of `repr` and of JSON, applied once or twice).
 *
 * The same function is applied to the forms searched for, so a form matches the skeleton of
 * any text that differs from it only by those artefacts. A {@link SkeletonMap} leads from a
 * position in the skeleton back to the byte it came from.
 *
 * @module
 */

/**
 * What the skeleton leaves out; each match is removed whole. Escape sequences are bounded
 * (an OSC must end within 512 bytes, by BEL or ST, on its line), so a stray ESC cannot hide
 * what follows it.
 */
const NOISE =
  // deno-lint-ignore no-control-regex
  /\x1b(?:\[[0-?]{0,32}[ -/]{0,8}[@-~]?|\][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)|[ -/]{0,8}[0-~]?)|\n[ \t]*|[\\'"\r]/g;

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
  if (!onlySingles(out)) return out.replace(NOISE, "");
  // Without escapes and indented lines, NOISE removes single characters: a character class
  // is about twice as fast as the whole expression.
  return out.replace(SINGLE, "");
}

/**
 * Whether the skeleton of `text` only leaves out single characters (no escape sequence, no
 * indentation after a line break), so that it still holds every form as written.
 */
export function onlySingles(text: string): boolean {
  return !text.includes("\x1b") && !text.includes("\n ") && !text.includes("\n\t");
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
    NOISE.lastIndex = 0;
    for (let m = NOISE.exec(text); m !== null; m = NOISE.exec(text)) {
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
