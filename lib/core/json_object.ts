/**
 * JSON text that must hold an object: one copy of the parse-then-check that tool output
 * (a peer's structured result, a tool's question) is read with.
 *
 * @example
 * ```ts
 * import { parseJsonObject } from "./json_object.ts";
 * parseJsonObject('{"said": "hi"}'); // { said: "hi" }
 * parseJsonObject("[1]"); // undefined
 * parseJsonObject("not json"); // undefined
 * ```
 *
 * @module
 */

/**
 * Parses `text` as a JSON object.
 *
 * @returns the object, or undefined when the text is not JSON or holds an array, a string,
 *   a number, a boolean or null
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  return data as Record<string, unknown>;
}
