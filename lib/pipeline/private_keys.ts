/**
 * Private keys by shape (SPEC S2.3): a PEM or OpenSSH private-key block — `-----BEGIN … PRIVATE
 * KEY-----` to its `-----END … PRIVATE KEY-----` — becomes `$PRIVATE_KEY` in every channel,
 * whether or not magi knows the key's value (a key in a file a tool printed, a context file).
 * A block that never ends is masked to the end of the output (fail closed).
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

/** What a private-key block is replaced by. */
export const PRIVATE_KEY = "$PRIVATE_KEY";

const BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/;
const END = /-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/;
const BLOCK = new RegExp(`${BEGIN.source}[\\s\\S]*?(?:${END.source}|$)`, "g");

/** The longest marker line kept back between chunks, so one cut in two is still seen. */
const HOLD = 80;

/** `text` with every private-key block replaced by {@link PRIVATE_KEY}. */
export function maskPrivateKeys(text: string): string {
  return text.includes("PRIVATE KEY") ? text.replace(BLOCK, PRIVATE_KEY) : text;
}

/** The same over a stream of chunks: `push` returns what is safe to release, `end` the rest. */
export class PrivateKeyStream {
  #carry = "";
  #inside = false;

  push(chunk: string): string {
    let text = this.#carry + chunk;
    let out = "";
    for (;;) {
      if (!this.#inside) {
        const begin = BEGIN.exec(text);
        if (!begin) {
          // Only a dash can start a marker: text with none in its tail is released whole.
          const dash = text.indexOf("-", Math.max(0, text.length - HOLD));
          const keep = dash < 0 ? text.length : dash;
          this.#carry = text.slice(keep);
          return out + text.slice(0, keep);
        }
        out += text.slice(0, begin.index) + PRIVATE_KEY;
        text = text.slice(begin.index + begin[0].length);
        this.#inside = true;
      } else {
        const end = END.exec(text);
        if (!end) {
          // Inside a key: nothing is released; only a possible start of its end line is kept.
          this.#carry = text.slice(Math.max(0, text.length - HOLD));
          return out;
        }
        text = text.slice(end.index + end[0].length);
        this.#inside = false;
      }
    }
  }

  end(): string {
    const rest = this.#carry;
    this.#carry = "";
    if (this.#inside) {
      this.#inside = false;
      return "";
    }
    return maskPrivateKeys(rest);
  }
}
