/**
 * The second masking pass: the forms of each secret and the fragments of its value are
 * searched for in the text's skeleton (`skeleton.ts`), so that a value with colour codes
 * inside, shell-quoted, `repr`'d, JSON-escaped twice, upper-cased, wrapped at any column or
 * cut into pieces is found; each find is mapped back to the bytes it came from, which
 * become `$NAME` (one `$NAME` a line, line breaks kept).
 *
 * @module
 */
import { fromByteString } from "./bytes.ts";
import { FormSearch } from "./form_search.ts";
import { FRAGMENT, FragmentSearch, fragmentWorthy } from "./fragments.ts";
import { skeleton, SkeletonMap, spreadEnd, spreadWithOffsets } from "./skeleton.ts";

/**
 * A digit: what the spread search's forms and fragments all hold. A random secret's every 10
 * characters hold one; its base64, base32, hex and decimal forms do too.
 */
const GATE = /[0-9]/;

/**
 * Whether `text` holds a digit (ten searches for one character: faster than GATE), or a
 * fullwidth or mathematical one (in UTF-8: U+FF10–FF19, U+1D7CE–1D7FF), which the spread
 * skeleton reads as one.
 */
function hasDigit(text: string): boolean {
  for (let d = 0; d < 10; d++) if (text.includes(String.fromCharCode(48 + d))) return true;
  return text.includes("\xef\xbc") || text.includes("\xf0\x9d\x9f");
}

/** What the second pass searches for, built once per masker. */
export class SkeletonSearch {
  readonly #forms: FormSearch | undefined;
  readonly #formNames = new Map<string, string>();
  readonly #fragments: FragmentSearch;
  readonly #fragmentNames: string[];
  #bytes = new Uint8Array(0);
  /** How many skeleton characters a stream holds back. */
  readonly keep: number;

  /**
   * @param secrets each secret's name (with `$`), value (a byte string) and its revealing
   *   forms (byte strings)
   */
  /** The skeleton this search reads (`skeleton`, or `spread` for the third pass). */
  readonly strip: (text: string) => string;
  /** Whether it reads the spread skeleton. */
  readonly #spread: boolean;

  /**
   * @param spread read the spread skeleton (`skeleton.ts`) instead of the skeleton
   * @param minForm the shortest skeleton of a form searched for
   */
  constructor(
    secrets: ReadonlyArray<{ name: string; value: string; forms: readonly string[] }>,
    { spread = false, minForm = 6 }: { spread?: boolean; minForm?: number } = {},
  ) {
    const strip = spread ? (text: string) => spreadWithOffsets(text, false).text : skeleton;
    this.strip = strip;
    this.#spread = spread;
    // (Measured: indexing the forms with the fragments, in one scan, is slower: the grams of
    // lower-cased base64 forms cover most of those of ordinary text.)
    for (const { name, forms } of secrets) {
      for (const form of forms) {
        const s = strip(form);
        if (s.length < minForm || this.#formNames.has(s)) continue;
        if (!spread || GATE.test(s)) this.#formNames.set(s, name);
      }
    }
    this.#forms = this.#formNames.size > 0
      ? new FormSearch([...this.#formNames.keys()])
      : undefined;
    this.#fragments = new FragmentSearch(
      secrets.map((s) => strip(fragmentSource(s.value))),
      FRAGMENT,
      spread ? (f) => fragmentWorthy(f) && GATE.test(f) : fragmentWorthy,
    );
    this.#fragmentNames = secrets.map((s) => s.name);
    this.keep = Math.max(this.#forms?.longest ?? 0, FRAGMENT) + 1;
  }

  /** Whether there is nothing to search for. */
  get empty(): boolean {
    return !this.#forms && this.#fragments.empty;
  }

  /**
   * The stretches of `text` (a byte string) to replace, in order, not overlapping; `open`
   * marks a stretch that may go on past the end of the text.
   */
  find(text: string): SkeletonCut[] {
    // In the spread skeleton, everything searched holds a digit: text without one holds none
    // of it.
    if (this.#spread && !hasDigit(text)) return [];
    const skel = this.strip(text);
    if (this.#bytes.length < skel.length) this.#bytes = new Uint8Array(skel.length);
    const bytes = fromByteString(skel, this.#bytes);
    const runs: Array<{ index: number; end: number; name: string; open: boolean }> = [];
    for (const { index, form } of this.#forms?.findAll(skel, bytes) ?? []) {
      runs.push({ index, end: index + form.length, name: this.#formNames.get(form)!, open: false });
    }
    for (const f of this.#fragments.findAll(skel, bytes)) {
      // A spread run holds a digit (see GATE), whatever the rest of the text holds.
      if (this.#spread && !f.open && !GATE.test(skel.slice(f.index, f.end))) continue;
      runs.push({ index: f.index, end: f.end, name: this.#fragmentNames[f.secret], open: f.open });
    }
    if (runs.length === 0) return [];
    runs.sort((a, b) => a.index - b.index || b.end - a.end);
    // The spread skeleton's offsets are worked out again, only when there is a find.
    const offsets = this.#spread ? spreadWithOffsets(text).offsets : undefined;
    const map = offsets ? { offset: (k: number) => offsets[k] } : new SkeletonMap(text);
    const cuts: SkeletonCut[] = [];
    let last: { index: number; end: number; name: string; open: boolean } | undefined;
    const close = () => {
      if (!last) return;
      const index = map.offset(last.index);
      // The whole of a last character of more than one byte (`ｋ` read as `k`), and the
      // invisible ones after it.
      const end = spreadEnd(text, map.offset(last.end - 1) + 1);
      cuts.push({
        index,
        end,
        replacement: replacement(text.slice(index, end), last.name),
        open: last.open,
      });
    };
    for (const run of runs) {
      if (last && run.index < last.end) {
        if (run.end > last.end) {
          last.end = run.end;
          last.open = run.open;
        }
        continue;
      }
      close();
      last = { ...run };
    }
    close();
    return cuts;
  }
}

/** A URL's user information (`user:password` before `@`): group 1. */
const URL_USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*(?::[A-Za-z][A-Za-z0-9+.-]*)*:\/\/(?:([^\s/?#@]*)@)?/;

/**
 * The part of a value whose fragments reveal it: for a URL, only its user information (a
 * password, a DSN's key), since its scheme, host and path are public and in every log;
 * otherwise the whole value.
 */
function fragmentSource(value: string): string {
  const url = URL_USERINFO.exec(value);
  if (!url) return value;
  return url[1] ?? "";
}

/** A stretch to replace: bytes [index, end) become `replacement`. */
export interface SkeletonCut {
  index: number;
  end: number;
  replacement: string;
  /** The occurrence may go on after the text searched. */
  open: boolean;
}

/**
 * `$NAME` for each line of `original` that holds part of the occurrence; line breaks and the
 * indentation after them are kept.
 */
function replacement(original: string, name: string): string {
  if (!original.includes("\n")) return name;
  return original.split(/(\r?\n)/).map((piece, i) =>
    i % 2 === 1 || skeleton(piece) === "" ? piece : LINE_START.exec(piece)![0] + name
  ).join("");
}

/** What a replaced line keeps of its start: indentation, a line number (`cat -n`, `grep -n`). */
const LINE_START = /^[ \t]*(?:[0-9]{1,9}[\t:])?/;

/** Beyond this many bytes held, a stream releases what it would rather keep. */
const MAX_HELD = 1 << 20;

/** Masks one stream in the second pass; see {@link SkeletonSearch}. */
export class SkeletonStream {
  #carry = "";

  constructor(private readonly search: SkeletonSearch) {}

  /** Masks a chunk and returns what is safe to release. */
  push(chunk: string): string {
    const text = this.#carry + chunk;
    let until = this.#holdFrom(text);
    if (until === 0) {
      if (text.length <= MAX_HELD) {
        this.#carry = text;
        return "";
      }
      // Mostly line breaks and escapes: release all but a tail of bytes.
      until = text.length - (2 * this.search.keep + 64);
    }
    const cuts = this.search.find(text);
    let out = "";
    let pos = 0;
    let cut = until;
    for (const c of cuts) {
      if (c.index >= until) break;
      if (c.open && text.length <= MAX_HELD) {
        cut = c.index;
        break;
      }
      out += text.slice(pos, c.index) + c.replacement;
      pos = c.end;
      cut = Math.max(until, pos);
    }
    cut = Math.max(cut, pos);
    out += text.slice(pos, cut);
    this.#carry = text.slice(cut);
    return out;
  }

  /** Releases what was held back, masked. */
  end(): string {
    const text = this.#carry;
    this.#carry = "";
    let out = "";
    let pos = 0;
    for (const c of this.search.find(text)) {
      out += text.slice(pos, c.index) + c.replacement;
      pos = c.end;
    }
    return out + text.slice(pos);
  }

  /**
   * Where the held-back tail starts: the last {@link SkeletonSearch.keep} skeleton characters
   * (at least) stay, since an occurrence could start among them.
   */
  #holdFrom(text: string): number {
    const keep = this.search.keep;
    for (let width = 2 * keep + 64;; width *= 2) {
      if (width >= text.length) return 0;
      // 64 to spare: a slice that starts inside an escape sequence counts some of it.
      if (this.search.strip(text.slice(text.length - width)).length >= keep + 64) {
        return text.length - width;
      }
    }
  }
}

/** Masks a whole byte string in the second pass. */
export function maskSkeleton(search: SkeletonSearch, text: string): string {
  const stream = new SkeletonStream(search);
  return stream.push(text) + stream.end();
}
