/**
 * Private keys by shape (SPEC S2.3): a PEM or OpenSSH private-key block — `-----BEGIN … PRIVATE
 * KEY-----` to its `-----END … PRIVATE KEY-----` — becomes `$PRIVATE_KEY` in every channel,
 * whether or not magi knows the key's value (a key in a file a tool printed, a context file).
 * PuTTY key files and age identities too. A block that never ends is masked to the end of the
 * output (fail closed).
 *
 * @example
 * ```ts
 * import { maskPrivateKeys } from "./private_keys.ts";
 * maskPrivateKeys("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb");
 * // "a\n$PRIVATE_KEY\nb"
 * ```
 *
 * @module
 */

import { KeyMaterialStream, maskKeyMaterial } from "./key_material.ts";

/** What a private-key block is replaced by. */
export const PRIVATE_KEY = "$PRIVATE_KEY";

/**
 * The kinds of block: where one begins, and what ends it. PEM and OpenSSH keys; a PuTTY key
 * file (`PuTTY-User-Key-File-N:` to its `Private-MAC:` line); an age identity
 * (`AGE-SECRET-KEY-1` and its Bech32 characters).
 */
const KINDS: ReadonlyArray<{ begin: string; end: RegExp; mark: string }> = [
  {
    begin: "-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
    end: /-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/,
    mark: "PRIVATE KEY",
  },
  { begin: "PuTTY-User-Key-File-\\d+:", end: /Private-MAC: *[0-9a-fA-F]+/, mark: "PuTTY-User-Key" },
  { begin: "AGE-SECRET-KEY-1", end: /[^02-9AC-HJ-NP-Z]|$/, mark: "AGE-SECRET-KEY-1" },
];
const BEGIN = new RegExp(KINDS.map((k, i) => `(?<k${i}>${k.begin})`).join("|"));
const BLOCKS = KINDS.map((k) => new RegExp(`${k.begin}[\\s\\S]*?(?:${k.end.source}|$)`, "g"));

/** The longest marker line kept back between chunks, so one cut in two is still seen. */
const HOLD = 80;

/** The fixed starts of the markers. */
const STARTS = ["-----BEGIN ", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1"];

/** Where the tail of `text` that could still grow into a marker begins (else its length). */
function heldFrom(text: string): number {
  for (let i = Math.max(0, text.length - HOLD); i < text.length; i++) {
    const c = text[i];
    if (c !== "-" && c !== "P" && c !== "A") continue;
    const rest = text.slice(i);
    const could = STARTS.some((m) =>
      rest.length < m.length ? m.startsWith(rest) : rest.startsWith(m)
    );
    if (could) return i;
  }
  return text.length;
}

/**
 * `text` with every private-key block replaced by {@link PRIVATE_KEY}, and then key material
 * found by its content (`key_material.ts`).
 */
export function maskPrivateKeys(text: string): string {
  return maskKeyMaterial(maskMarkedKeys(text));
}

/** `text` with every private-key block between marker lines replaced by {@link PRIVATE_KEY}. */
function maskMarkedKeys(text: string): string {
  let out = text;
  KINDS.forEach((k, i) => {
    if (out.includes(k.mark)) out = out.replace(BLOCKS[i], (m) => PRIVATE_KEY + endOf(k, m));
  });
  return out;
}

/** An age key's block ends at the first character not of its alphabet: that one stays. */
function endOf(kind: (typeof KINDS)[number], block: string): string {
  if (kind.mark !== "AGE-SECRET-KEY-1") return "";
  const last = block.at(-1) ?? "";
  return /[02-9AC-HJ-NP-Z]/.test(last) ? "" : last;
}

/** The same over a stream of chunks: `push` returns what is safe to release, `end` the rest. */
export class PrivateKeyStream {
  readonly #marked = new MarkedKeyStream();
  readonly #content = new KeyMaterialStream();

  push(chunk: string): string {
    const marked = this.#marked.push(chunk);
    return marked === "" ? "" : this.#content.push(marked);
  }

  end(): string {
    return this.#content.push(this.#marked.end()) + this.#content.end();
  }
}

/** Blocks between marker lines over a stream of chunks. */
class MarkedKeyStream {
  #carry = "";
  /** The kind of block the stream is inside, or -1. */
  #inside = -1;

  push(chunk: string): string {
    let text = this.#carry + chunk;
    let out = "";
    for (;;) {
      if (this.#inside < 0) {
        const begin = BEGIN.exec(text);
        if (!begin) {
          // Only what could still become a marker is held back; plain text goes now.
          const keep = heldFrom(text);
          this.#carry = text.slice(keep);
          return out + text.slice(0, keep);
        }
        out += text.slice(0, begin.index) + PRIVATE_KEY;
        text = text.slice(begin.index + begin[0].length);
        this.#inside = KINDS.findIndex((_, i) => begin.groups?.[`k${i}`] !== undefined);
      } else {
        const kind = KINDS[this.#inside];
        const end = kind.end.exec(text);
        // An end that reaches the chunk's edge may go on in the next (a MAC's hex, an age
        // key's characters): wait for more.
        const found = end &&
          (kind.mark === "PRIVATE KEY" || end.index + end[0].length < text.length);
        if (!found) {
          // Inside a key: nothing is released; only a possible start of its end line is kept.
          this.#carry = text.slice(Math.max(0, text.length - HOLD));
          return out;
        }
        const keepEnd = kind.mark === "AGE-SECRET-KEY-1";
        text = text.slice(end.index + (keepEnd ? 0 : end[0].length));
        this.#inside = -1;
      }
    }
  }

  end(): string {
    const rest = this.#carry;
    this.#carry = "";
    if (this.#inside >= 0) {
      this.#inside = -1;
      return "";
    }
    return maskMarkedKeys(rest);
  }
}
