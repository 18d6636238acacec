/**
 * The shape of a policy rule as config holds it: checked when config loads, read by
 * `policy/rules.ts`.
 *
 * @module
 */
/** What a rule's `source` may name: where a tool came from (`project`: a project's `.magi/tools`). */
export const RULE_SOURCES = ["builtin", "tools_dir", "shipped", "lua", "project", "peer", "mcp"];

/** The JSON Schema of one rule (config key `policy.rules` items; the rules themselves: policy/rules.ts). */
export const RULE_SCHEMA = {
  type: "object",
  required: ["tool", "decision"],
  additionalProperties: false,
  properties: {
    id: { type: "string", minLength: 1 },
    tool: { type: "string", minLength: 1 },
    source: {
      anyOf: [{ enum: RULE_SOURCES }, { type: "array", items: { enum: RULE_SOURCES } }],
    },
    command: {
      anyOf: [{ type: "string", minLength: 1 }, {
        type: "array",
        items: { type: "string", minLength: 1 },
        minItems: 1,
      }],
    },
    fields: { type: "object", additionalProperties: { type: "string" } },
    where: { enum: ["inside_roots", "outside_roots"] },
    decision: { enum: ["allow", "ask", "deny"] },
    reason: { type: "string" },
    examples: {
      type: "object",
      additionalProperties: false,
      properties: {
        match: { type: "array", items: { type: "object" } },
        no_match: { type: "array", items: { type: "object" } },
      },
    },
  },
};
