/**
 * Private keys by shape (SPEC S2.3): a PEM or OpenSSH private-key block — `-----BEGIN … PRIVATE
 * KEY-----` to its `-----END … PRIVATE KEY-----` — becomes `$PRIVATE_KEY` in every channel,
 * whether or not magi knows the key's value (a key in a file a tool printed, a context file).
 * PuTTY key files and age identities too. A PEM block whose END line never comes is masked
 * only as far as its body goes (`pem_body.ts`): its header lines and the base64 run that follows
 * the BEGIN line, so a BEGIN line inside JSON or a cut file cannot hide the rest of the output.
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

import { KeyMaterialStream } from "./key_material.ts";
import { type BodyState, pemBodyEnd } from "./pem_body.ts";

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
  const s = new PrivateKeyStream();
  return s.push(text) + s.end();
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
  /** How far a PEM block's body has gone (see `pem_body.ts`). */
  #body: BodyState | undefined;

  push(chunk: string, final = false): string {
    let text = this.#carry + chunk;
    this.#carry = "";
    let out = "";
    for (;;) {
      if (this.#inside < 0) {
        const begin = BEGIN.exec(text);
        if (!begin) {
          // Only what could still become a marker is held back; plain text goes now.
          const keep = final ? text.length : heldFrom(text);
          this.#carry = text.slice(keep);
          return out + text.slice(0, keep);
        }
        out += text.slice(0, begin.index) + PRIVATE_KEY;
        text = text.slice(begin.index + begin[0].length);
        this.#inside = KINDS.findIndex((_, i) => begin.groups?.[`k${i}`] !== undefined);
        if (this.#inside === 0) this.#body = { width: -1, last: false, content: false, join: true };
      } else if (this.#inside === 0) {
        const end = pemBodyEnd(text, 0, this.#body!, final);
        if (end < 0) {
          // Inside a key's body: nothing is released; it goes on from where it stopped.
          this.#carry = text.slice(-1 - end);
          return out;
        }
        text = text.slice(end);
        this.#inside = -1;
      } else {
        const kind = KINDS[this.#inside];
        const end = kind.end.exec(text);
        // An end that reaches the chunk's edge may go on in the next (a MAC's hex, an age
        // key's characters): wait for more.
        const found = end && (final || end.index + end[0].length < text.length);
        if (!found) {
          // Inside a key: nothing is released; only a possible start of its end line is kept.
          this.#carry = final ? "" : text.slice(Math.max(0, text.length - HOLD));
          if (final) this.#inside = -1;
          return out;
        }
        const keepEnd = kind.mark === "AGE-SECRET-KEY-1";
        text = text.slice(end.index + (keepEnd ? 0 : end[0].length));
        this.#inside = -1;
      }
    }
  }

  end(): string {
    return this.push("", true);
  }
}
