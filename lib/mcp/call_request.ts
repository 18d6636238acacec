/**
 * The `tools/call` request as magi's MCP server accepts it. A request whose params do not
 * satisfy the CallToolRequest schema (MCP 2025-11-25, server/tools "Error Handling": a
 * malformed request is a protocol error) is answered with JSON-RPC -32602 (Invalid params)
 * and one plain line saying what is wrong, e.g. `"arguments" must be an object, not a string`.
 *
 * The SDK parses a request against the handler's schema before any handler runs and answers
 * a failed parse with -32603 (Internal error) and the parser's issue list as the message
 * (typescript-sdk issue #2284). So the schema here lets any params through that parse, checks
 * `name` and `arguments` itself and raises an `McpError` with -32602; the SDK's own check of the
 * rest of the request, which runs next, already answers -32602.
 *
 * @module
 */
import * as z from "zod/v4";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** A JSON value's kind as a message names it: "a string", "an array", "null", … */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" || type === "undefined" ? type : `a ${type}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with a `tools/call` request's params, or undefined when `name` is a string and
 * `arguments` is absent or a JSON object.
 */
export function callParamsProblem(params: unknown): string | undefined {
  if (!isObject(params)) return `"params" must be an object, not ${kindOf(params)}`;
  if (typeof params.name !== "string") {
    return `"name" must be a string, not ${kindOf(params.name)}`;
  }
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return `"arguments" must be an object, not ${kindOf(params.arguments)}`;
  }
  return undefined;
}

/**
 * A JSON-RPC -32602 (Invalid params) error whose message is `text` alone. The SDK's `McpError`
 * puts `MCP error -32602: ` before its message; the server would send that whole message, and
 * an SDK client puts the same prefix before it again.
 */
export function invalidParams(text: string): McpError {
  const error = new McpError(ErrorCode.InvalidParams, text);
  error.message = text;
  return error;
}

/**
 * The schema to register the `tools/call` handler with: CallToolRequest whose params are
 * checked by {@link callParamsProblem}.
 *
 * @throws McpError with code -32602 (Invalid params), while the SDK parses a malformed request
 */
export const ToolsCallRequestSchema = CallToolRequestSchema.extend({
  params: z.unknown().transform((params) => {
    const problem = callParamsProblem(params);
    if (problem) throw invalidParams(problem);
    return params as z.infer<typeof CallToolRequestSchema>["params"];
  }),
});
