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

const OFFSET = /^(?:[0-9a-fA-F]{4,16}:? +| +)/;

/** One parsed dump line: where each byte's hex digits and character are, as offsets. */
interface DumpLine {
  /** The offset of each byte's first hex digit. */
  hex: number[];
  /** The offset of each byte's character, when the line has a character column. */
  chars: number[] | undefined;
  /** The bytes shown, as a byte string. */
  bytes: string;
}

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
  if (lead) probe = Math.max(probe, chain(text, -1, search, lead, final, found) + DUMP_RUN);
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
    probe = Math.max(end, chain(text, lineStart, search, "", final, found)) + DUMP_RUN;
  }
  return found;
}

/**
 * Parses the dump lines from `lineStart` on (-1: the line `lead` begins), searches their
 * bytes, and returns where the last one ends (or where the first line ends when it is none).
 */
function chain(
  text: string,
  lineStart: number,
  search: FormSearch,
  lead: string,
  final: boolean,
  found: WrappedFound[],
): number {
  const lines: DumpLine[] = [];
  let bytes = "";
  let at = lineStart;
  let reached = at;
  while (true) {
    const from = Math.max(at, 0);
    let stop = text.indexOf("\n", from);
    if (stop < 0) {
      if (!final) break;
      stop = text.length;
    }
    const content = stop > from && text.charCodeAt(stop - 1) === 13 ? stop - 1 : stop;
    reached = stop;
    if (content - from + (at < 0 ? lead.length : 0) > MAX_DUMP_LINE) break;
    const line = at < 0 ? lead + text.slice(0, content) : text.slice(from, content);
    const parsed = parseLine(line, at < 0 ? -lead.length : from);
    if (!parsed) break;
    lines.push(parsed);
    bytes += parsed.bytes;
    if (parsed.hex.length < MIN_DUMP_BYTES || stop >= text.length) break;
    at = stop + 1;
  }
  if (lines.length === 0) return reached;
  const firstByte: number[] = [];
  let count = 0;
  for (const line of lines) {
    firstByte.push(count);
    count += line.hex.length;
  }
  let line = 0;
  for (const { index, form } of search.findAll(bytes)) {
    const last = index + form.length - 1;
    while (line + 1 < lines.length && firstByte[line + 1] <= index) line++;
    const pieces: Array<[number, number]> = [];
    for (let i = line; i < lines.length && firstByte[i] <= last; i++) {
      const { hex, chars } = lines[i];
      const a = Math.max(index, firstByte[i]) - firstByte[i];
      const b = Math.min(last, firstByte[i] + hex.length - 1) - firstByte[i];
      pieces.push([hex[a], hex[b] + 2]);
      if (chars) pieces.push([chars[a], chars[b] + 1]);
    }
    if (pieces[0][0] < 0) continue; // released with the lead
    found.push({ index: pieces[0][0], end: pieces[pieces.length - 1][1], form, pieces });
  }
  return reached;
}

/** Parses one dump line (without its line break); `base` is the offset of its start. */
function parseLine(line: string, base: number): DumpLine | undefined {
  const offset = OFFSET.exec(line);
  if (!offset) return undefined;
  const hex: number[] = [];
  /** After each group: how many bytes so far and where the group ends. */
  const ends: Array<[number, number]> = [];
  let i = offset[0].length;
  while (i < line.length) {
    let j = i;
    while (j < line.length && DUMP_CHAR[line.charCodeAt(j)] === 1) j++;
    if (j === i || (j - i) % 2 !== 0 || (j < line.length && line.charCodeAt(j) !== 32)) break;
    for (let k = i; k < j; k += 2) hex.push(base + k);
    ends.push([hex.length, j]);
    let gap = j;
    while (gap < line.length && line.charCodeAt(gap) === 32) gap++;
    if (gap - j > 2) break;
    i = gap;
  }
  const shown = (count: number, chars: number[] | undefined): DumpLine => {
    const digits = hex.slice(0, count);
    let bytes = "";
    for (const h of digits) {
      bytes += String.fromCharCode(parseInt(line.slice(h - base, h - base + 2), 16));
    }
    return { hex: digits, chars, bytes };
  };
  for (const [count, end] of ends) {
    const rest = line.slice(end);
    if (rest.trim() === "") return shown(count, undefined);
    // The character column follows two spaces or more (it may itself start with spaces).
    for (let gap = 2; gap < rest.length && rest.charCodeAt(gap - 1) === 32; gap++) {
      const column = rest.slice(gap);
      const framed = column.length === count
        ? 0
        : column.length === count + 2 && /^\|.*\|$|^>.*<$/s.test(column)
        ? 1
        : -1;
      if (framed < 0) continue;
      return shown(count, Array.from({ length: count }, (_, k) => base + end + gap + framed + k));
    }
  }
  return undefined;
}
