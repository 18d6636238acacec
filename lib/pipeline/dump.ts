/**
 * Finding secrets in canonical hex dumps: `xxd` (any `-g`, `-u`), `hexdump -C`, and `od` with
 * one-byte hex (`od -t x1`, `od -A x -t x1z`, `od -An -tx1`). Such a line is an offset, the
 * bytes as hex digit pairs in groups separated by spaces, and maybe a column of the bytes as
 * characters (`.` for unprintable ones; bare, in `|…|` or in `>…<`). A value spread over
 * several lines shows in both parts of each, so neither the plain nor the wrapped search
 * sees it.
 *
 * Lines are found by probing one byte in {@link DUMP_RUN} for a run of hex digits and spaces
 * at least that long (every full dump line of 16 bytes or more holds one; ordinary words are
 * short), then parsed. The bytes of consecutive dump lines are decoded and searched for the
 * forms; each occurrence is reported with its pieces: on each line, the hex from its first
 * byte to its last, and the same bytes in the character column.
 *
 * Not understood: dumps of 2-byte words (`od -x`, `hexdump` without `-C`, whose byte order
 * is swapped), `od -c`, fewer than 16 bytes a line, lines longer than {@link MAX_DUMP_LINE},
 * and lines `hexdump` leaves out as repeats (`*`).
 *
 * @module
 */
import { fromByteString, toByteString } from "./bytes.ts";
import type { FormSearch } from "./form_search.ts";
import type { WrappedFound } from "./wrapped.ts";

/** The shortest run of hex digits and spaces that marks a dump line, in bytes. */
const DUMP_RUN = 32;

/** The longest dump line parsed, in bytes (`xxd -c 32` writes 124). */
export const MAX_DUMP_LINE = 160;

/** The fewest bytes a dump line shows, but for the last line of a dump. */
const MIN_DUMP_BYTES = 16;

/** 1 for hex digits, 2 for a space. */
const DUMP_CHAR = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") DUMP_CHAR[c.charCodeAt(0)] = 1;
DUMP_CHAR[32] = 2;

/** The value of each hex digit (others: -1). */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) {
  HEX["0123456789abcdef".charCodeAt(d)] = d;
  HEX["0123456789ABCDEF".charCodeAt(d)] = d;
}

/** One parsed dump line. */
interface DumpLine {
  /** Where its bytes start in the chain's scratch arrays. */
  first: number;
  /** How many bytes it shows. */
  count: number;
  /** The offset of its character column's first character, when it has that column. */
  chars: number | undefined;
}

/** Scratch for the lines of one chain: each byte's value and its hex digits' offset. */
let values = new Uint8Array(4096);
let hexAt = new Int32Array(4096);
/** Scratch for one line: after each group, the bytes so far and where the group ends. */
const groupCount = new Int32Array(MAX_DUMP_LINE);
const groupEnd = new Int32Array(MAX_DUMP_LINE);

/**
 * The most bytes an occurrence of a form of `length` bytes spans in a dump, including the
 * rest of its last line: its bytes fill at most ⌈length / 16⌉ + 1 lines.
 */
export function dumpSpan(length: number): number {
  return (Math.ceil(length / MIN_DUMP_BYTES) + 2) * (MAX_DUMP_LINE + 2);
}

/**
 * Every occurrence of `search`'s forms in the bytes that the hex dump lines in `text` show.
 *
 * @param bytes `text` as bytes (see `FormSearch.bytesOf`)
 * @param lead the start of the line `text` begins inside (output a stream released
 *   already), so that a dump line cut there is parsed whole (occurrences that start in it
 *   are not reported); "" when `text` starts a line, null when that line is too long to be
 *   a dump line
 * @param final whether `text` ends the output (else its last, unended line is left alone)
 */
export function findDumped(
  text: string,
  bytes: Uint8Array,
  search: FormSearch,
  lead: string | null = "",
  final = true,
): WrappedFound[] {
  const found: WrappedFound[] = [];
  const n = text.length;
  const kind = (i: number) => DUMP_CHAR[bytes[i]];
  let probe = DUMP_RUN - 1;
  // The line the text begins inside: its run may lie before the probes.
  if (lead) {
    probe = Math.max(probe, chain(text, bytes, -1, search, lead, final, found) + DUMP_RUN);
  }
  while (probe < n) {
    if (kind(probe) === 0) {
      probe += DUMP_RUN;
      continue;
    }
    let end = probe + 1;
    while (end < n && kind(end) !== 0) end++;
    let start = probe;
    while (start > 0 && end - start < DUMP_RUN && kind(start - 1) !== 0) start--;
    if (end - start < DUMP_RUN) {
      probe = end + DUMP_RUN;
      continue;
    }
    const lineStart = text.lastIndexOf("\n", start) + 1;
    if (lineStart === 0 && lead !== "") {
      probe = end + DUMP_RUN; // the line begun in `lead`: done above, or too long
      continue;
    }
    probe = Math.max(end, chain(text, bytes, lineStart, search, "", final, found)) + DUMP_RUN;
  }
  return found;
}

/**
 * Parses the dump lines from `lineStart` on (-1: the line `lead` begins), searches their
 * bytes, and returns where the last one ends (or where the first line ends when it is none).
 */
function chain(
  text: string,
  bytes: Uint8Array,
  lineStart: number,
  search: FormSearch,
  lead: string,
  final: boolean,
  found: WrappedFound[],
): number {
  const lines: DumpLine[] = [];
  let total = 0;
  let at = lineStart;
  let reached = at;
  while (true) {
    const from = Math.max(at, 0);
    let stop = text.indexOf("\n", from);
    if (stop < 0) {
      if (!final) break;
      stop = text.length;
    }
    const content = stop > from && bytes[stop - 1] === 13 ? stop - 1 : stop;
    reached = stop;
    if (content - from + (at < 0 ? lead.length : 0) > MAX_DUMP_LINE) break;
    if (values.length < total + MAX_DUMP_LINE) {
      const size = Math.max(total + MAX_DUMP_LINE, values.length * 2);
      const moreValues = new Uint8Array(size);
      moreValues.set(values);
      values = moreValues;
      const moreHexAt = new Int32Array(size);
      moreHexAt.set(hexAt);
      hexAt = moreHexAt;
    }
    let parsed: DumpLine | undefined;
    if (at < 0) {
      const line = fromByteString(lead + text.slice(0, content));
      parsed = parseLine(line, 0, line.length, -lead.length, total);
    } else {
      parsed = parseLine(bytes, from, content, from, total);
    }
    if (!parsed) break;
    lines.push(parsed);
    total += parsed.count;
    if (parsed.count < MIN_DUMP_BYTES || stop >= text.length) break;
    at = stop + 1;
  }
  if (lines.length === 0) return reached;
  let line = 0;
  for (const { index, form } of search.findAll(toByteString(values.subarray(0, total)))) {
    const last = index + form.length - 1;
    while (line + 1 < lines.length && lines[line + 1].first <= index) line++;
    const pieces: Array<[number, number]> = [];
    for (let i = line; i < lines.length && lines[i].first <= last; i++) {
      const { first, count, chars } = lines[i];
      const a = Math.max(index, first);
      const b = Math.min(last, first + count - 1);
      pieces.push([hexAt[a], hexAt[b] + 2]);
      if (chars !== undefined) pieces.push([chars + a - first, chars + b - first + 1]);
    }
    if (pieces[0][0] < 0) continue; // released with the lead
    found.push({ index: pieces[0][0], end: pieces[pieces.length - 1][1], form, pieces });
  }
  return reached;
}

/**
 * Parses one dump line, `b[from..to)` (without its line break), whose offset in the text is
 * `base`; puts its bytes' values and hex offsets into the scratch arrays from `into` on.
 */
function parseLine(
  b: Uint8Array,
  from: number,
  to: number,
  base: number,
  into: number,
): DumpLine | undefined {
  const at = (p: number) => base + p - from;
  // The offset: 4 to 16 hex digits and maybe a colon, or nothing; then spaces.
  let i = from;
  while (i < to && HEX[b[i]] >= 0) i++;
  if (i > from) {
    if (i - from < 4 || i - from > 16) return undefined;
    if (b[i] === 58) i++;
  }
  if (i >= to || b[i] !== 32) return undefined;
  while (i < to && b[i] === 32) i++;
  let count = 0;
  let groups = 0;
  while (i < to && groups < MAX_DUMP_LINE) {
    let j = i;
    while (j < to && HEX[b[j]] >= 0) j++;
    if (j === i || (j - i) % 2 !== 0 || (j < to && b[j] !== 32)) break;
    for (let k = i; k < j; k += 2) {
      values[into + count] = (HEX[b[k]] << 4) | HEX[b[k + 1]];
      hexAt[into + count] = at(k);
      count++;
    }
    groupCount[groups] = count;
    groupEnd[groups++] = j;
    let gap = j;
    while (gap < to && b[gap] === 32) gap++;
    if (gap - j > 2) break;
    i = gap;
  }
  for (let g = 0; g < groups; g++) {
    const [shown, end] = [groupCount[g], groupEnd[g]];
    let rest = end;
    while (rest < to && b[rest] === 32) rest++;
    if (rest === to) return { first: into, count: shown, chars: undefined };
    // The character column follows two spaces or more (it may itself start with spaces).
    for (let column = end + 2; column < to && b[column - 1] === 32; column++) {
      const length = to - column;
      if (length === shown) return { first: into, count: shown, chars: at(column) };
      const framed = (b[column] === 124 && b[to - 1] === 124) ||
        (b[column] === 62 && b[to - 1] === 60);
      if (framed && length === shown + 2) {
        return { first: into, count: shown, chars: at(column + 1) };
      }
    }
  }
  return undefined;
}
