/**
 * Terminal safety: text from a tool or a model reaches the person's terminal with its
 * control characters shown, not obeyed — no clipboard writes (OSC 52), title changes
 * (OSC 0/2), line erasing or cursor moves (CSI), no bell. Only magi's own styling, written
 * through the "own" path of `out.ts`, carries escape sequences.
 *
 * @module
 */

/**
 * The controls a terminal acts on: C0 (U+0000–U+001F) except tab and line feed, DEL
 * (U+007F) and C1 (U+0080–U+009F; a UTF-8 terminal obeys C1 CSI `U+009B` as `ESC [`).
 * A carriage return before a line feed is kept (Windows line ends); a lone one, which
 * lets text overwrite its own line, is not.
 */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * How a control is shown: C0 as its Control Picture (ESC → `␛`, U+241B; NUL → `␀`), DEL as
 * `␡`, C1 as `<9B>`-style hex.
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
 * escapes DEL and C1 as `\u007f`…`\u009f` too, so the value a reader parses is unchanged.
 */
export function terminalSafeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    /[\x7f-\x9f]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}
