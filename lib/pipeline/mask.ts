/**
 * Masking secrets by value (SPEC S2.3): every occurrence of a credential's value — and of its
 * base64, URL-encoded and JSON-escaped forms, and of each line of a multi-line value — is
 * replaced by `$NAME`, even when the value is split across chunks of a stream.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { decodeByteString, utf8ByteString } from "./bytes.ts";

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
 * Gathers the secrets to mask: environment variables whose names mark credentials, the
 * variables named in `extraNames` (config `secrets.env`) and the literal `values` (config
 * `secrets.values`, masked as `$SECRET`).
 *
 * @param env the process environment, name → value
 */
export function collectSecrets(
  env: Record<string, string>,
  extraNames: readonly string[] = [],
  values: readonly string[] = [],
): CollectedSecrets {
  const secrets: Secret[] = [];
  const tooShort: string[] = [];
  const add = (name: string, value: string | undefined) => {
    if (value === undefined || value === "") return;
    if (utf8ByteString(value).length < MIN_SECRET_BYTES) tooShort.push(name);
    else secrets.push({ name, value });
  };
  const extra = new Set(extraNames);
  for (const [name, value] of Object.entries(env)) {
    if (extra.has(name) || isCredentialName(name)) add(name, value);
  }
  for (const value of values) add("SECRET", value);
  return { secrets, tooShort };
}

/**
 * The byte strings (UTF-8, one character per byte) that reveal a value: the value itself,
 * each of its lines, its JSON-escaped and URL-encoded forms, and the parts of its base64
 * (standard and URL-safe alphabets) that do not depend on neighbouring bytes, for each of
 * the three alignments the value can have inside a longer base64 text (RFC 4648 §4, §5).
 * Forms shorter than {@link MIN_SECRET_BYTES} are left out.
 */
export function revealingForms(value: string): string[] {
  const forms = new Set<string>();
  const add = (form: string) => {
    if (form.length >= MIN_SECRET_BYTES) forms.add(form);
  };
  const addText = (text: string) => {
    add(utf8ByteString(text));
    add(utf8ByteString(JSON.stringify(text).slice(1, -1)));
    const url = encodeURIComponent(text);
    for (const form of [url, url.replaceAll("%20", "+")]) {
      add(form);
      add(form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
    }
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
  return [...forms];
}

function escapeForRegExp(form: string): string {
  let out = "";
  for (let i = 0; i < form.length; i++) {
    const c = form.charCodeAt(i);
    const isWord = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    out += isWord ? form[i] : "\\x" + c.toString(16).padStart(2, "0");
  }
  return out;
}

/**
 * Replaces secrets in output. Build one per process from {@link collectSecrets}; it is
 * immutable and can serve any number of streams at once.
 *
 * @example
 * ```ts
 * import { Masker } from "./mask.ts";
 * const masker = new Masker([{ name: "API_TOKEN", value: "s3cr3t-value" }]);
 * masker.maskText("token=s3cr3t-value"); // "token=$API_TOKEN"
 * ```
 */
export class Masker {
  readonly #pattern: RegExp | undefined;
  readonly #names = new Map<string, string>();
  readonly #longest: number;

  /** @param secrets the values to mask, each replaced by `$` + its name */
  constructor(secrets: readonly Secret[]) {
    for (const { name, value } of secrets) {
      for (const form of revealingForms(value)) {
        if (!this.#names.has(form)) this.#names.set(form, "$" + name);
      }
    }
    const forms = [...this.#names.keys()].sort((a, b) => b.length - a.length);
    this.#longest = forms.length > 0 ? forms[0].length : 0;
    this.#pattern = forms.length > 0
      ? new RegExp(forms.map(escapeForRegExp).join("|"), "g")
      : undefined;
  }

  /** The number of byte patterns searched for (each secret has several forms). */
  get patternCount(): number {
    return this.#names.size;
  }

  /** Masks a whole byte string (see `bytes.ts`). */
  maskBytes(text: string): string {
    if (!this.#pattern) return text;
    return text.replace(this.#pattern, (form) => this.#names.get(form)!);
  }

  /** Masks ordinary text (UTF-16), such as an error message. */
  maskText(text: string): string {
    if (!this.#pattern) return text;
    return decodeByteString(this.maskBytes(utf8ByteString(text)));
  }

  /** Starts masking one stream of byte strings; see {@link MaskStream}. */
  stream(): MaskStream {
    return new MaskStream(this.#pattern, this.#names, this.#longest);
  }
}

/**
 * Masks one stream. `push` returns what can be released now; up to (longest form − 1) bytes
 * are held back so that a secret split across chunks is still caught; `end` releases them.
 */
export class MaskStream {
  #carry = "";
  readonly #pattern: RegExp | undefined;

  constructor(
    pattern: RegExp | undefined,
    private readonly names: Map<string, string>,
    private readonly longest: number,
  ) {
    this.#pattern = pattern ? new RegExp(pattern.source, "g") : undefined;
  }

  /** Masks a chunk (a byte string) and returns the part that is safe to release. */
  push(chunk: string): string {
    const pattern = this.#pattern;
    if (!pattern) return chunk;
    const text = this.#carry + chunk;
    const safeUntil = text.length - (this.longest - 1);
    pattern.lastIndex = 0;
    let out = "";
    let pos = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m.index >= safeUntil) break;
      out += text.slice(pos, m.index) + this.names.get(m[0])!;
      pos = m.index + m[0].length;
    }
    const cut = Math.max(safeUntil, pos);
    out += text.slice(pos, cut);
    this.#carry = text.slice(cut);
    return out;
  }

  /** Releases what was held back, masked. */
  end(): string {
    const rest = this.#carry;
    this.#carry = "";
    if (!this.#pattern) return rest;
    return rest.replace(this.#pattern, (form) => this.names.get(form)!);
  }
}
