/**
 * Finding secrets' forms in encoded text wrapped into lines: `base64` (GNU coreutils) and MIME
 * wrap at 76 columns, `openssl base64` and PEM at 64, OpenSSH keys at 70, `xxd -p` hex at 60,
 * each line ending in `\n` or `\r\n`. A form can then be cut by a line break anywhere: its
 * first part ends one line and the rest starts the next (a long form spans several lines).
 *
 * Only line breaks that follow a run of at least {@link MIN_WRAP} characters of the base64
 * and hex alphabets are looked at. Such runs are found by probing one byte in
 * {@link MIN_WRAP} (every run that long holds a probed byte) and looking around the probes
 * that land on the alphabet; ordinary text, whose words are short, costs a few byte reads
 * per probe. For each chain of such lines, the lines' runs are joined and searched for the
 * forms; an occurrence that crosses a line break is reported with its piece on each line.
 *
 * @module
 */
import type { FormSearch } from "./form_search.ts";

/**
 * The narrowest wrapped line looked at, in bytes (without its line break): `xxd -p` writes
 * 60 hex digits, PEM and `openssl base64` 64 characters, `base64` 76.
 */
export const MIN_WRAP = 60;

/** 1 for the characters of base64 (both alphabets and padding) and hex. */
const ALPHABET = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=") {
  ALPHABET[c.charCodeAt(0)] = 1;
}

/** An occurrence of a form cut by line breaks. */
export interface WrappedFound {
  /** Where the occurrence starts: the offset (in bytes) of its first piece. */
  index: number;
  /** Where it ends: the end offset (exclusive) of its last piece. */
  end: number;
  /** The form found (as given to the search). */
  form: string;
  /** The form's piece on each line, as [start, end) byte offsets, in order; at least two. */
  pieces: Array<[number, number]>;
}

/**
 * The most bytes an occurrence of a form of `length` bytes spans when wrapped: each line
 * break inside it (at most one per {@link MIN_WRAP} bytes, plus one) adds up to 2 bytes.
 */
export function wrappedSpan(length: number): number {
  return length + 2 * (1 + Math.ceil(length / MIN_WRAP));
}

/**
 * Every occurrence of `search`'s forms in `text` (a byte string) that a line break cuts,
 * where the line before each break inside it ends in a run of at least {@link MIN_WRAP}
 * alphabet characters. Occurrences on one line are not reported (a plain search finds them).
 *
 * @param bytes `text` as bytes (see `FormSearch.bytesOf`)
 * @param before how many alphabet characters come just before `text` (output already
 *   released by a stream; see {@link trailingRun}), so that a run that starts there counts
 */
export function findWrapped(
  text: string,
  bytes: Uint8Array,
  search: FormSearch,
  before = 0,
): WrappedFound[] {
  const found: WrappedFound[] = [];
  const n = text.length;
  const isAlpha = (i: number) => ALPHABET[bytes[i]] === 1;
  /** The end of the line break at `at`, or -1 when there is none. */
  const breakAt = (at: number) =>
    text.charCodeAt(at) === 10
      ? at + 1
      : text.charCodeAt(at) === 13 && text.charCodeAt(at + 1) === 10
      ? at + 2
      : -1;
  // The run at the start may go on from `before`, whatever the probes below see.
  let probe = before > 0 && isAlpha(0) ? 0 : MIN_WRAP - 1;
  while (probe < n) {
    if (!isAlpha(probe)) {
      probe += MIN_WRAP;
      continue;
    }
    let end = probe + 1;
    while (end < n && isAlpha(end)) end++;
    // Ordinary words mostly end in a space: look back only from a line's end.
    let after = breakAt(end);
    let start = probe;
    if (after >= 0) {
      while (start > 0 && isAlpha(start - 1)) start--;
      if (end - start + (start === 0 ? before : 0) < MIN_WRAP) after = -1;
    }
    if (after < 0) {
      // Any longer run starts after `end` and so holds `end + MIN_WRAP` or a later probe.
      probe = end + MIN_WRAP;
      continue;
    }
    const lines: Array<[number, number]> = [[start, end]];
    while (after >= 0) {
      let stop = after;
      while (stop < n && isAlpha(stop)) stop++;
      lines.push([after, stop]);
      after = stop - lines[lines.length - 1][0] >= MIN_WRAP ? breakAt(stop) : -1;
    }
    searchLines(text, lines, search, found);
    probe = lines[lines.length - 1][1] + MIN_WRAP;
  }
  return found;
}

/**
 * How many alphabet characters end `text.slice(0, end)`, counting `before` when they all
 * do; at most {@link MIN_WRAP} (all that {@link findWrapped} needs to know).
 */
export function trailingRun(text: string, end: number, before: number): number {
  let at = end;
  while (at > 0 && end - at < MIN_WRAP && ALPHABET[text.charCodeAt(at - 1)] === 1) at--;
  return Math.min(MIN_WRAP, end - at + (at === 0 ? before : 0));
}

/** Searches the joined runs of a chain of wrapped lines and maps what crosses a break back. */
function searchLines(
  text: string,
  lines: Array<[number, number]>,
  search: FormSearch,
  found: WrappedFound[],
): void {
  let joined = "";
  const starts: number[] = [];
  for (const [start, end] of lines) {
    starts.push(joined.length);
    joined += text.slice(start, end);
  }
  let line = 0;
  for (const { index, form } of search.findAll(joined)) {
    const stop = index + form.length;
    while (line + 1 < lines.length && starts[line + 1] <= index) line++;
    if (line + 1 >= lines.length || starts[line + 1] >= stop) continue;
    const pieces: Array<[number, number]> = [];
    for (let i = line; i < lines.length && starts[i] < stop; i++) {
      const from = Math.max(index, starts[i]) - starts[i] + lines[i][0];
      const to = Math.min(stop, starts[i] + lines[i][1] - lines[i][0]) - starts[i] + lines[i][0];
      if (to > from) pieces.push([from, to]);
    }
    found.push({ index: pieces[0][0], end: pieces[pieces.length - 1][1], form, pieces });
  }
}
