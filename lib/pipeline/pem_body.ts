/**
 * How far a PEM private-key block's body goes after its BEGIN line, so that a block whose END
 * line never comes (a BEGIN line in JSON or a repr, a file cut by `head`) masks only its body
 * and not the rest of the output.
 *
 * A body is: header lines (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`) and blank lines, then lines
 * of base64 each as long as the first but the last (shorter), then the END line. Lines are
 * broken by a line break or JSON's `\n` escape and may carry a prefix (`linePrefixEnd`: line
 * numbers, `> ` quote marks, indentation); lines of 16 characters or more may also be joined by
 * a comma or spaces. The block ends after its END line, or where the body stops: before the
 * separator after its last line, so what follows (a closing quote, the next line) is shown.
 *
 * @module
 */
import { linePrefixEnd } from "./key_material.ts";

/** Where a body has got to, kept between chunks. */
export interface BodyState {
  /** The width of the first base64 line, or -1 before it. */
  width: number;
  /** Whether a line shorter than the first was seen (only the END line may follow). */
  last: boolean;
  /** Whether a base64 line was seen (header lines come only before). */
  content: boolean;
  /** Whether the next line may be joined by a comma or spaces instead of a line break. */
  join: boolean;
  /** The base64 characters of a long line already passed (the text went on from inside it). */
  mid?: number;
}

/** A line longer than this, cut by a chunk's end, is gone on from inside (no re-reading). */
const LONG = 4096;

/** Base64 characters. */
const B64 = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
  B64[c.charCodeAt(0)] = 1;
}
const END_LINE = /-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/y;
const END_START = "-----END ";
/** The longest END line looked for before the block is taken to have ended. */
const END_MAX = 80;
const HEADER = /[A-Za-z][A-Za-z0-9-]*: [^\r\n\\]*/y;

/**
 * The length of a line break at `at` (`\r\n`, `\n`, or their JSON escapes), 0 if there is
 * none, -1 if the text ends before it can be told.
 */
function breakAt(text: string, at: number): number {
  let i = at;
  if (text.startsWith("\\r", i)) i += 2;
  if (text.charCodeAt(i) === 13) i++;
  if (text.charCodeAt(i) === 10) return i + 1 - at;
  if (text.startsWith("\\n", i)) return i + 2 - at;
  if (i >= text.length - 1 && (i === text.length || text.charCodeAt(i) === 92)) return -1;
  return 0;
}

/**
 * Where the PEM block whose body starts at `at` (right after its BEGIN line) ends in `text`:
 * an offset ≥ 0, or, when the text ends before that can be told and more may come,
 * `-1 - resume` where `resume` is where to go on from (with `st`) once more text is there. At
 * the end of the output (`final`) a body still going on ends with it.
 */
export function pemBodyEnd(text: string, at: number, st: BodyState, final: boolean): number {
  const n = text.length;
  let p = at;
  for (;;) {
    const more = () => final ? n : -1 - p;
    const passed = st.mid ?? 0;
    st.mid = 0;
    let q = p;
    let brk = 1;
    if (passed === 0) {
      let i = p;
      while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
      if (i === n) return more();
      brk = breakAt(text, i);
      if (brk < 0) return more();
      if (brk > 0) q = linePrefixEnd(text, i + brk);
      else if (text.startsWith(END_START, i)) q = i;
      else if (n - i < END_START.length && END_START.startsWith(text.slice(i))) return more();
      else if (st.join && (i > p || text.charCodeAt(i) === 44)) {
        q = text.charCodeAt(i) === 44 ? i + 1 : i;
        if (text.charCodeAt(q) === 32) q++;
      } else return p;
      if (q >= n) return more();
      if (text.charCodeAt(q) === 45) {
        END_LINE.lastIndex = q;
        const m = END_LINE.exec(text);
        if (m) return q + m[0].length;
        if (
          !final && n - q < END_MAX && END_START.startsWith(text.slice(q, q + END_START.length))
        ) {
          return more();
        }
        return p;
      }
      if (st.last) return p;
      if (!st.content) {
        HEADER.lastIndex = q;
        const h = HEADER.exec(text);
        if (h && brk > 0) {
          if (q + h[0].length === n && !final) return more();
          p = q + h[0].length;
          st.join = false;
          continue;
        }
        if (!final && n - q < 40 && /^[A-Za-z][A-Za-z0-9-]*:?$/.test(text.slice(q))) return more();
      }
    }
    let r = q;
    while (r < n && B64[text.charCodeAt(r)] === 1) r++;
    const len = passed + r - q;
    if (r === n && !final) {
      if (len < LONG) return more();
      st.mid = len;
      return -1 - r;
    }
    if (len === 0) {
      // A blank line: before the base64 (after headers), or after it (only END may follow).
      if (brk > 0 && breakAt(text, q) !== 0) {
        if (st.content) st.last = true;
        p = q;
        continue;
      }
      return p;
    }
    if (st.width < 0) st.width = len;
    if (len > st.width && passed === 0) return p;
    if (len < st.width) {
      // The last line ends at a line break or the END line ("more text" after a cut is no line).
      let e = r;
      while (text.charCodeAt(e) === 32 || text.charCodeAt(e) === 9) e++;
      if (e === n && !final) return more();
      const ends = e === n || breakAt(text, e) !== 0 || text.startsWith("-", e);
      if (!ends) return p;
      st.last = true;
    }
    st.content = true;
    st.join = len >= 16;
    p = r;
  }
}
