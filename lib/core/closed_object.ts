/**
 * The JSON Schema of an object with exactly the properties named: the frame that tool
 * parameters and config values are written in.
 *
 * @example
 * ```ts
 * import { closedObject } from "./closed_object.ts";
 * closedObject({ path: { type: "string" } }, ["path"]);
 * // { type: "object", properties: {…}, required: ["path"], additionalProperties: false }
 * ```
 *
 * @module
 */
import type { JsonSchema } from "./types.ts";

/** An object schema of `properties`, `required` of them, no others. */
export function closedObject(
  properties: Record<string, JsonSchema>,
  required: string[],
): JsonSchema {
  return { type: "object", properties, required, additionalProperties: false };
}
