/**
 * Terminal safety: text from a tool or a model reaches the person's terminal with its
 * control characters shown, not obeyed — no clipboard writes (OSC 52), title changes
 * (OSC 0/2), line erasing or cursor moves (CSI), no bell, and no Unicode bidi control that
 * reorders what the person reads (Trojan Source: a right-to-left override makes `"user"`
 * look like what it is not). Only magi's own styling, written through the "own" path of
 * `out.ts`, carries escape sequences.
 *
 * @module
 */

/**
 * The controls a terminal acts on: C0 (U+0000–U+001F) except tab and line feed, DEL
 * (U+007F) and C1 (U+0080–U+009F; a UTF-8 terminal obeys C1 CSI `U+009B` as `ESC [`).
 * A carriage return before a line feed is kept (Windows line ends); a lone one, which
 * lets text overwrite its own line, is not. And the bidi controls a terminal may apply:
 * the Arabic letter mark U+061C, the marks U+200E/U+200F, the embeddings and overrides
 * U+202A–U+202E and the isolates U+2066–U+2069.
 */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** What {@link terminalSafeJson} escapes besides what `JSON.stringify` does: DEL, C1, bidi. */
const JSON_UNSAFE = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * How a control is shown: C0 as its Control Picture (ESC → `␛`, U+241B; NUL → `␀`), DEL as
 * `␡`, C1 and bidi controls as hex in angle brackets (`<9B>`, `<202E>`).
 */
function visible(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return `<${code.toString(16).toUpperCase()}>`;
}

/**
 * Shows every control character of `text` visibly (see {@link CONTROL}); `\n`, `\t` and
 * the `\r` of `\r\n` pass. UTF-16 text in, UTF-16 text out.
 *
 * @example
 * ```ts
 * import { terminalSafe } from "./terminal_safe.ts";
 * terminalSafe("\x1b]52;c;aGk=\x07ok\n"); // "␛]52;c;aGk=␇ok\n"
 * ```
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c, at: number) => {
    if (c === "\r" && text.charCodeAt(at + 1) === 0x0a) return c;
    return visible(c);
  });
}

/**
 * JSON text that a terminal shows as it is: `JSON.stringify` already escapes C0, and this
 * escapes DEL, C1 and the bidi controls as `\u007f`, `\u202e`… too, so the value a reader
 * parses is unchanged.
 */
export function terminalSafeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    JSON_UNSAFE,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}
