/**
 * Encodings of a secret that `revealingForms` adds beyond base64, hex, URL and JSON: base32
 * (RFC 4648 §6) and UTF-16 in both byte orders.
 *
 * @module
 */
import { Buffer } from "node:buffer";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * Bytes in base32 (RFC 4648 §6, upper case, `=` padding), as GNU `base32` writes them.
 *
 * @example
 * ```ts
 * import { base32 } from "./encodings.ts";
 * base32(new TextEncoder().encode("foobar")); // "MZXW6YTBOI======"
 * ```
 */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= 0xff;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

/**
 * A text as UTF-16LE and UTF-16BE, each as a byte string (one character per byte), as
 * `iconv -t UTF-16LE`, PowerShell and Windows tools write it; a byte-order mark before it
 * does not change these bytes.
 */
export function utf16Forms(text: string): string[] {
  const le = Buffer.from(text, "utf16le");
  const be = Buffer.from(le);
  be.swap16();
  return [le.toString("latin1"), be.toString("latin1")];
}

const BASE32HEX = "0123456789ABCDEFGHIJKLMNOPQRSTUV";

/** Bytes in base32hex (RFC 4648 §7, upper case, `=` padding), as `basenc --base32hex` writes. */
export function base32hex(bytes: Uint8Array): string {
  return base32(bytes).replace(/[A-Z2-7]/g, (c) => BASE32HEX[BASE32.indexOf(c)]);
}

/**
 * The ways HTML and XML writers escape a text (HTML §13.1.4, XML 1.0 §4.6): `&`, `<` and `>` as
 * `&amp;` `&lt;` `&gt;`, `"` as `&quot;` or `&#34;` or left alone, `'` as `&#x27;` (Python's
 * `html.escape`), `&#39;` (Go, PHP), `&apos;` (XML) or left alone. Only forms that differ from
 * the text.
 *
 * @example
 * ```ts
 * import { htmlForms } from "./encodings.ts";
 * htmlForms("a<b").includes("a&lt;b"); // true
 * ```
 */
export function htmlForms(text: string): string[] {
  if (!/[&<>"']/.test(text)) return [];
  const base = text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  const forms = new Set<string>();
  for (const quote of ['"', "&quot;", "&#34;"]) {
    for (const apostrophe of ["'", "&#x27;", "&#39;", "&apos;"]) {
      forms.add(base.replaceAll('"', quote).replaceAll("'", apostrophe));
    }
  }
  forms.delete(text);
  return [...forms];
}

/** Bytes as decimal numbers with a space between (`od -An -tu1`; other separators: spread). */
export function decimalForm(bytes: Uint8Array): string {
  return Array.from(bytes).join(" ");
}
