/**
 * Masking secrets by value (SPEC S2.3): every occurrence of a credential's value — and of its
 * base64, hex, URL-encoded and JSON-escaped forms, and of each line of a multi-line value —
 * is replaced by `$NAME`, even when the value is split across chunks of a stream, when a
 * form is cut by the line breaks of wrapped base64 or hex (`wrapped.ts`), and when the value
 * is shown by a canonical hex dump (`dump.ts`).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { decodeByteString, utf8ByteString } from "./bytes.ts";
import { FormSearch, type Found } from "./form_search.ts";
import { dumpSpan, findDumped, MAX_DUMP_LINE } from "./dump.ts";
import { findWrapped, trailingRun, type WrappedFound, wrappedSpan } from "./wrapped.ts";
import { maskSkeleton, SkeletonSearch, SkeletonStream } from "./skeleton_stage.ts";
import { onlySingles, skeleton } from "./skeleton.ts";
import { FRAGMENT, fragmentWorthy } from "./fragments.ts";
import { base32, base32hex, decimalForm, htmlForms, utf16Forms } from "./encodings.ts";
import { credentialShape } from "./secret_shapes.ts";
import { maskPrivateKeys, PrivateKeyStream } from "./private_keys.ts";

/** A credential: the name it is masked as (without `$`) and its value as text. */
export interface Secret {
  name: string;
  value: string;
}

/** Values shorter than this many bytes are not masked: they would mask ordinary text. */
export const MIN_SECRET_BYTES = 6;

/** The words that mark an environment variable's name as a credential's. */
const CREDENTIAL_WORD =
  /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|CREDENTIALS?|AUTH|COOKIE|PRIVATE|SIGNATURE|DSN)S?$/i;

/** Names that carry one of those words but are never credentials. */
const NOT_CREDENTIAL = new Set(["PWD", "OLDPWD"]);

/**
 * Tells whether an environment variable's name marks a credential: one of its `_`-separated
 * words ends with KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, PASS, PWD, CREDENTIAL(S),
 * AUTH, COOKIE, PRIVATE, SIGNATURE or DSN (case-insensitive), so `GITHUB_TOKEN`, `APIKEY`
 * and `PGPASSWORD` are credentials and `GIT_AUTHOR_NAME` and `KEYBOARD` are not.
 */
export function isCredentialName(name: string): boolean {
  if (NOT_CREDENTIAL.has(name.toUpperCase())) return false;
  return name.split("_").some((word) => word !== "" && CREDENTIAL_WORD.test(word));
}

/** What {@link collectSecrets} found. */
export interface CollectedSecrets {
  /** The secrets to mask. */
  secrets: Secret[];
  /** Names whose values are shorter than {@link MIN_SECRET_BYTES} and so are not masked. */
  tooShort: string[];
}

/**
 * Gathers the secrets to mask: environment variables whose names mark credentials or whose
 * values have a credential's shape (`secret_shapes.ts`: a URL with a password — masked whole
 * and the password alone —, a known token format, a PEM private key), the variables named
 * in `extraNames` (config `secrets.env`) and the literal `values` (config `secrets.values`,
 * masked as `$SECRET`). Names in `ignore` (config `secrets.ignore`, from the person's own
 * config only) are not secrets by name or shape; `extraNames` still are.
 *
 * @param env the process environment, name → value
 */
export function collectSecrets(
  env: Record<string, string>,
  extraNames: readonly string[] = [],
  values: readonly string[] = [],
  ignore: readonly string[] = [],
): CollectedSecrets {
  const secrets: Secret[] = [];
  const tooShort: string[] = [];
  const add = (name: string, value: string | undefined) => {
    if (value === undefined || value === "") return;
    if (utf8ByteString(value).length < MIN_SECRET_BYTES) tooShort.push(name);
    else secrets.push({ name, value });
  };
  const extra = new Set(extraNames);
  const ignored = new Set(ignore);
  for (const [name, value] of Object.entries(env)) {
    const named = extra.has(name) || (!ignored.has(name) && isCredentialName(name));
    const shape = named || !ignored.has(name) ? credentialShape(value) : undefined;
    if (!named && !shape) continue;
    add(name, value);
    // A part (a URL's password) too short to mask alone is still masked inside the value.
    for (const part of shape?.values.slice(1) ?? []) {
      if (utf8ByteString(part).length >= MIN_SECRET_BYTES) add(name, part);
    }
  }
  for (const value of values) add("SECRET", value);
  return { secrets, tooShort };
}

/**
 * The ways JSON writers escape a string (RFC 8259 §7): the minimal escaping of
 * `JSON.stringify`, plus every combination of non-ASCII as `\uXXXX` (Python's
 * `json.dumps`, PHP), `<`, `>` and `&` as `\u003c`… (Go's encoding/json) and `/` as `\/`
 * (PHP), in lower- and upper-case hex.
 */
function jsonForms(text: string): string[] {
  const base = JSON.stringify(text).slice(1, -1);
  const hex = (c: number, upper: boolean) => {
    const h = c.toString(16).padStart(4, "0");
    return "\\u" + (upper ? h.toUpperCase() : h);
  };
  const forms = new Set<string>();
  for (const upper of [false, true]) {
    for (let mask = 0; mask < 8; mask++) {
      let form = base;
      if (mask & 1) form = form.replace(/[\u0080-\uffff]/g, (c) => hex(c.charCodeAt(0), upper));
      if (mask & 2) form = form.replace(/[<>&]/g, (c) => hex(c.charCodeAt(0), upper));
      if (mask & 4) form = form.replaceAll("/", "\\/");
      forms.add(form);
    }
  }
  return [...forms];
}

/**
 * The ways URL encoders write a string (RFC 3986 §2.1): `encodeURIComponent`; strict RFC 3986
 * (also `!'()*`, as curl and Python's `quote(safe="")`); Python's default `quote` (keeps
 * `/`); each with spaces as `+` (HTML forms) and with lower-case hex.
 */
function urlForms(text: string): string[] {
  const component = encodeURIComponent(text);
  const strict = component.replace(
    /[!'()*]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  const forms = new Set<string>();
  for (const form of [component, strict, strict.replaceAll("%2F", "/")]) {
    for (const spaced of [form, form.replaceAll("%20", "+")]) {
      forms.add(spaced);
      forms.add(spaced.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()));
    }
  }
  return [...forms];
}

/** Values longer than this many bytes get no forms of hex pairs with separators. */
const MAX_SEPARATED_BYTES = 256;

/**
 * The byte strings (UTF-8, one character per byte) that reveal a value: the value itself,
 * each of its lines, its JSON-escaped and URL-encoded forms, and the parts of its base64
 * (standard and URL-safe alphabets) that do not depend on neighbouring bytes, for each of
 * the three alignments the value can have inside a longer base64 text (RFC 4648 §4, §5), and
 * its bytes in hex (lower- and upper-case, two digits a byte, with nothing between them or, for
 * values of up to 256 bytes, a space or a colon).
 * Forms shorter than {@link MIN_SECRET_BYTES} are left out.
 */
export function revealingForms(value: string): string[] {
  const forms = new Set<string>();
  const add = (form: string) => {
    if (form.length >= MIN_SECRET_BYTES) forms.add(form);
  };
  const addText = (text: string) => {
    add(utf8ByteString(text));
    for (const form of jsonForms(text)) add(utf8ByteString(form));
    for (const form of urlForms(text)) add(form);
    for (const form of htmlForms(text)) add(utf8ByteString(form));
  };
  addText(value);
  const lines = value.split(/\r?\n/);
  if (lines.length > 1) { for (const line of lines) addText(line.trim()); }
  const bytes = Buffer.from(value, "utf8");
  for (let skip = 0; skip < 3; skip++) {
    const usable = Math.floor((bytes.length - skip) / 3) * 3;
    if (usable <= 0) continue;
    const part = bytes.subarray(skip, skip + usable);
    add(part.toString("base64"));
    add(part.toString("base64url"));
  }
  add(bytes.toString("base64"));
  // Base32 (RFC 4648 §6) at each of the five alignments, and the value as UTF-16 (both byte
  // orders; a BOM before it changes nothing). Case does not matter: the second pass folds it.
  for (let skip = 0; skip < 5; skip++) {
    const usable = Math.floor((bytes.length - skip) / 5) * 5;
    if (usable > 0) add(base32(bytes.subarray(skip, skip + usable)));
  }
  add(base32(bytes));
  add(base32hex(bytes));
  for (const form of utf16Forms(value)) add(form);
  // Encoded twice (the whole value only, up to 256 bytes: longer forms lengthen what a stream
  // holds): base64 of its base64, and that base64 in hex.
  if (bytes.length <= MAX_SEPARATED_BYTES) {
    const b64 = Buffer.from(bytes.toString("base64"));
    add(b64.toString("base64"));
    add(b64.toString("hex"));
  }
  const hex = bytes.toString("hex");
  add(hex);
  add(hex.toUpperCase());
  // One line of hex pairs with a separator: Python's `bytes.hex(" ")`, `hexdump -e '/1 "%02x "'`,
  // colon-separated as fingerprints and MAC addresses are written. Not for long values (keys,
  // certificates): the longest form sets how much a stream holds back and scans again.
  const separators = bytes.length <= MAX_SEPARATED_BYTES ? [" ", ":"] : [];
  // Its bytes as decimal numbers (`od -An -tu1`; `[107, 57, …]` and other separators are
  // joined by the third pass).
  if (bytes.length <= MAX_SEPARATED_BYTES) add(decimalForm(bytes));
  for (const separator of separators) {
    const separated = hex.replace(/(..)(?!$)/g, `$1${separator}`);
    add(separated);
    add(separated.toUpperCase());
  }
  return [...forms];
}

/**
 * Replaces secrets in output. Build one per process from {@link collectSecrets}; it is
 * immutable and can serve any number of streams at once. Forms cut by the line breaks of
 * wrapped base64 or hex (`xxd -p`) are found too (see `wrapped.ts`), and values in hex dumps
 * (`dump.ts`): each piece becomes `$NAME`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Masker } from "./mask.ts";
 * const masker = new Masker([{ name: "API_TOKEN", value: "s3cr3t-value" }]);
 * assert.equal(masker.maskText("token=s3cr3t-value"), "token=$API_TOKEN");
 * ```
 */
export class Masker {
  readonly #search: FormSearch | undefined;
  readonly #names = new Map<string, string>();
  readonly #skeleton: SkeletonSearch | undefined;
  /** The third pass: the forms and fragments in the spread skeleton (pieces with separators). */
  readonly #spread: SkeletonSearch | undefined;
  /** The forms the first pass searches as written (see the constructor). */
  readonly #plain: FormSearch | undefined;

  /** @param secrets the values to mask, each replaced by `$` + its name */
  constructor(secrets: readonly Secret[]) {
    const all = [];
    const unseen: string[] = [];
    for (const { name, value } of secrets) {
      const forms = revealingForms(value);
      for (const form of forms) {
        if (!this.#names.has(form)) this.#names.set(form, "$" + name);
      }
      // A short value like a word ("summer", "letmein") is searched only as written: in any
      // case, joined across lines or quotes, it would mask ordinary text.
      const bare = skeleton(utf8ByteString(value));
      if (bare.length < FRAGMENT && !fragmentWorthy(bare)) unseen.push(...forms);
      else {
        all.push({ name: "$" + name, value: utf8ByteString(value), forms });
        // The second pass finds every form as written too, but for those it cannot see:
        // forms made mostly of quotes and backslashes, whose skeleton is under 6 bytes.
        unseen.push(...forms.filter((form) => skeleton(form).length < MIN_SECRET_BYTES));
      }
    }
    this.#search = this.#names.size > 0 ? new FormSearch([...this.#names.keys()]) : undefined;
    this.#skeleton = all.length > 0 ? new SkeletonSearch(all) : undefined;
    // The third pass looks for the value's fragments and its encodings (base64, base32, hex,
    // decimal): its escaped forms (JSON, URL, HTML, UTF-16) spread out are the value's own
    // characters, which the fragments find.
    const encoded = all.map((s) => ({
      ...s,
      forms: s.forms.filter((f) => f !== s.value && /^[A-Za-z0-9+/=_ -]+$/.test(f)),
    }));
    this.#spread = all.length > 0
      ? new SkeletonSearch(encoded, { spread: true, minForm: FRAGMENT })
      : undefined;
    this.#plain = unseen.length > 0 ? new FormSearch(unseen) : undefined;
  }

  /** The number of byte patterns searched for (each secret has several forms). */
  get patternCount(): number {
    return this.#names.size;
  }

  /** Masks a whole byte string (see `bytes.ts`). */
  maskBytes(text: string): string {
    if (!this.#search) return maskPrivateKeys(text);
    const cuts = findCuts(this.#search, this.#plain, this.#names, text, {
      before: 0,
      lead: "",
      final: true,
    });
    const out = replaceCuts(text, cuts, text.length, Infinity).out;
    const second = this.#skeleton ? maskSkeleton(this.#skeleton, out) : out;
    return maskPrivateKeys(this.#spread ? maskSkeleton(this.#spread, second) : second);
  }

  /** Masks ordinary text (UTF-16), such as an error message. */
  maskText(text: string): string {
    if (!this.#search) return maskPrivateKeys(text);
    return decodeByteString(this.maskBytes(utf8ByteString(text)));
  }

  /** Starts masking one stream of byte strings; see {@link MaskStream}. */
  stream(): MaskStream {
    return new MaskStream(this.#search, this.#names, this.#skeleton, this.#plain, this.#spread);
  }
}

/** A stretch of text to replace: bytes [index, end) become `replacement`. */
interface Cut {
  index: number;
  end: number;
  replacement: string;
}

/** What a stream knows of the output before the text it searches. */
interface Before {
  /** How many base64 or hex characters end it (see `wrapped.ts`). */
  before: number;
  /** Its unended last line, or null when that is too long for a dump line (see `dump.ts`). */
  lead: string | null;
  /** Whether the text ends the output. */
  final: boolean;
}

/**
 * The stretches of `text` to replace: the forms found in it, the forms cut by the line
 * breaks of wrapped lines, and the forms in the bytes that hex dump lines show.
 */
function findCuts(
  search: FormSearch,
  plain: FormSearch | undefined,
  names: Map<string, string>,
  text: string,
  { before, lead, final }: Before,
): Cut[] {
  const bytes = search.bytesOf(text);
  // The second pass sees every form as written, but those it cannot (`plain`), unless escape
  // sequences or indentation may have cut into one: then the first pass searches them all.
  const found = !onlySingles(text)
    ? search.findAll(text, bytes)
    : plain
    ? plain.findAll(text, bytes)
    : [];
  const wrapped = findWrapped(text, bytes, search, before);
  const dumped = findDumped(text, bytes, search, lead, final);
  if (dumped.length > 0) wrapped.push(...dumped);
  if (wrapped.length === 0) {
    return found.map(({ index, form }) => ({
      index,
      end: index + form.length,
      replacement: names.get(form)!,
    }));
  }
  return mergeCuts(text, found, wrapped, names);
}

/** One occurrence to mask as a whole: its range and the pieces within it. */
interface Group {
  index: number;
  end: number;
  pieces: Array<[number, number, string]>;
}

/**
 * Joins plain and wrapped occurrences into cuts that do not overlap: occurrences that
 * overlap become one cut, in which every byte of every piece is masked.
 */
function mergeCuts(
  text: string,
  found: readonly Found[],
  wrapped: readonly WrappedFound[],
  names: Map<string, string>,
): Cut[] {
  const groups: Group[] = found.map(({ index, form }) => ({
    index,
    end: index + form.length,
    pieces: [[index, index + form.length, names.get(form)!]],
  }));
  for (const { index, end, form, pieces } of wrapped) {
    const name = names.get(form)!;
    groups.push({ index, end, pieces: pieces.map(([s, e]) => [s, e, name]) });
  }
  groups.sort((a, b) => a.index - b.index);
  const cuts: Cut[] = [];
  let current: Group | undefined;
  const close = (group: Group) => {
    group.pieces.sort((a, b) => a[0] - b[0]);
    let replacement = "";
    let pos = group.index;
    for (const [start, end, name] of group.pieces) {
      if (start < pos) {
        pos = Math.max(pos, end);
        continue;
      }
      replacement += text.slice(pos, start) + name;
      pos = end;
    }
    cuts.push({
      index: group.index,
      end: group.end,
      replacement: replacement + text.slice(pos, group.end),
    });
  };
  for (const group of groups) {
    if (current && group.index < current.end) {
      current.end = Math.max(current.end, group.end);
      current.pieces.push(...group.pieces);
    } else {
      if (current) close(current);
      current = { ...group, pieces: [...group.pieces] };
    }
  }
  if (current) close(current);
  return cuts;
}

/**
 * Replaces the cuts that start before `until`, and returns the masked text up to `cut`:
 * `until`, or the end of the last replaced cut when that reaches further. A cut that ends
 * after `settled` may overlap an occurrence not yet whole (one of a dump's lines shows the
 * end of one and the start of the next): it and what follows are kept for the next call.
 */
function replaceCuts(
  text: string,
  cuts: readonly Cut[],
  until: number,
  settled: number,
): { out: string; cut: number } {
  let out = "";
  let pos = 0;
  for (const { index, end, replacement } of cuts) {
    if (index >= until) break;
    if (end > settled) return { out: out + text.slice(pos, index), cut: index };
    out += text.slice(pos, index) + replacement;
    pos = end;
  }
  const cut = Math.max(until, pos);
  return { out: out + text.slice(pos, cut), cut };
}

/** Beyond this many bytes held, a stream releases a cut that it would rather keep. */
const MAX_CARRY = 1 << 20;

/**
 * Masks one stream. `push` returns what can be released now; twice the most bytes a form
 * can span (wrapped into lines or in a hex dump) are held back so that a secret split across
 * chunks is still caught; `end` releases them.
 */
export class MaskStream {
  #carry = "";
  #before: Before = { before: 0, lead: "", final: false };
  /** The most bytes an occurrence of a form spans. */
  readonly #span: number;
  /** The second pass (see `skeleton_stage.ts`), fed with what the first releases. */
  readonly #second: SkeletonStream | undefined;

  constructor(
    private readonly search: FormSearch | undefined,
    private readonly names: Map<string, string>,
    skeleton?: SkeletonSearch,
    private readonly plain?: FormSearch,
    spread?: SkeletonSearch,
  ) {
    const longest = search?.longest ?? 0;
    this.#span = Math.max(wrappedSpan(longest), dumpSpan(longest));
    this.#second = skeleton && !skeleton.empty ? new SkeletonStream(skeleton) : undefined;
    this.#third = spread && !spread.empty ? new SkeletonStream(spread) : undefined;
  }

  /** The third pass (pieces with separators between them), fed with what the second releases. */
  readonly #third: SkeletonStream | undefined;

  /** Private-key blocks by shape, after the values (see `private_keys.ts`). */
  readonly #keys = new PrivateKeyStream();

  /** Masks a chunk (a byte string) and returns the part that is safe to release. */
  push(chunk: string): string {
    const first = this.#first(chunk);
    const second = this.#second && first !== "" ? this.#second.push(first) : first;
    const third = this.#third && second !== "" ? this.#third.push(second) : second;
    return this.#keys.push(third);
  }

  /** Releases what was held back, masked. */
  end(): string {
    const first = this.#firstEnd();
    const second = this.#second ? this.#second.push(first) + this.#second.end() : first;
    const third = this.#third ? this.#third.push(second) + this.#third.end() : second;
    return this.#keys.push(third) + this.#keys.end();
  }

  #first(chunk: string): string {
    if (!this.search) return chunk;
    const text = this.#carry + chunk;
    const safeUntil = Math.max(0, text.length - 2 * this.#span);
    const settled = text.length > MAX_CARRY ? Infinity : text.length - this.#span;
    const cuts = findCuts(this.search, this.plain, this.names, text, this.#before);
    const { out, cut } = replaceCuts(text, cuts, safeUntil, settled);
    if (cut > 0) {
      const { before, lead } = this.#before;
      const newline = text.lastIndexOf("\n", cut - 1);
      const line = newline >= 0
        ? text.slice(newline + 1, cut)
        : lead === null
        ? null
        : lead + text.slice(0, cut);
      this.#before = {
        before: trailingRun(text, cut, before),
        lead: line !== null && line.length <= MAX_DUMP_LINE ? line : null,
        final: false,
      };
    }
    this.#carry = text.slice(cut);
    return out;
  }

  #firstEnd(): string {
    const rest = this.#carry;
    const before = { ...this.#before, final: true };
    this.#carry = "";
    this.#before = { before: 0, lead: "", final: false };
    if (!this.search) return rest;
    const cuts = findCuts(this.search, this.plain, this.names, rest, before);
    return replaceCuts(rest, cuts, rest.length, Infinity)
      .out;
  }
}
