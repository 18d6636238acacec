/**
 * Byte strings: the pipeline works on output as strings in which each character is one byte
 * (code points 0–255, "latin1"). That keeps invalid UTF-8 and binary output intact while
 * letting masking and bounding use the engine's fast string search.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** Turns bytes into a byte string (one character per byte). */
export function toByteString(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

const encoder = new TextEncoder();

/**
 * Turns a byte string back into bytes.
 *
 * @param into a buffer to reuse when it is large enough (the result is then a view of it)
 */
export function fromByteString(text: string, into?: Uint8Array): Uint8Array {
  const out = into && into.length >= text.length
    ? into.subarray(0, text.length)
    : new Uint8Array(text.length);
  // For ASCII, UTF-8 is the same bytes, and the engine's encoder is far faster than a loop
  // or Buffer's latin1 writer. It reads and writes the same count only for ASCII.
  const { read, written } = encoder.encodeInto(text, out);
  if (read === text.length && written === text.length) return out;
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/**
 * A code unit of 128 or more. Text without one (ASCII) is its own UTF-8 byte string and its
 * own decoding.
 */
const NOT_ASCII = /[\u0080-\uffff]/;

/** Encodes text as UTF-8 and returns it as a byte string. */
export function utf8ByteString(text: string): string {
  if (!NOT_ASCII.test(text)) return text;
  return Buffer.from(text, "utf8").toString("latin1");
}

/** Decodes a byte string as UTF-8; invalid sequences become U+FFFD. */
export function decodeByteString(text: string): string {
  if (!NOT_ASCII.test(text)) return text;
  return Buffer.from(text, "latin1").toString("utf8");
}

/**
 * Moves a cut position in a byte string back so that `text.slice(0, at)` does not end inside
 * a UTF-8 sequence (a lead byte whose continuation bytes lie at or after `at`).
 */
export function utf8Boundary(text: string, at: number): number {
  const end = Math.min(at, text.length);
  for (let p = end - 1; p >= 0 && p >= end - 4; p--) {
    const c = text.charCodeAt(p);
    if (c >= 0x80 && c <= 0xbf) continue;
    const length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return p + length > end ? p : end;
  }
  return end;
}

/**
 * Guesses whether output is binary rather than text: a NUL byte, or more than 30 % of bytes
 * that are control characters other than tab, newline, carriage return, form feed and escape,
 * within the first 8192 bytes.
 */
export function looksBinary(text: string): boolean {
  const sample = text.length > 8192 ? text.slice(0, 8192) : text;
  if (sample.length === 0) return false;
  let control = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if (c === 0) return true;
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 27) control++;
  }
  return control / sample.length > 0.3;
}
