import assert from "node:assert/strict";
import { argumentsProblem, schemaProblem, stripExtensions } from "../../lib/core/json_schema.ts";

Deno.test("schemaProblem() finds a $ref to nowhere and a pattern that is no expression at load time", () => {
  const ref = { type: "object", properties: { a: { $ref: "https://example.invalid/x.json" } } };
  assert.match(schemaProblem(ref) ?? "", /^the schema cannot be used: /);
  const pattern = { type: "object", properties: { a: { type: "string", pattern: "[[[" } } };
  assert.match(schemaProblem(pattern) ?? "", /^the schema (cannot be used|is not valid)/);
  assert.equal(schemaProblem({ type: "object", properties: { a: { type: "string" } } }), null);
});

Deno.test("two schemas with the same $id both validate", () => {
  const a = {
    $id: "urn:same",
    type: "object",
    properties: { x: { type: "string" } },
    required: ["x"],
  };
  const b = {
    $id: "urn:same",
    type: "object",
    properties: { y: { type: "number" } },
    required: ["y"],
  };
  assert.equal(schemaProblem(a), null);
  assert.equal(schemaProblem(b), null);
  assert.equal(argumentsProblem(a, { x: "s" }), null);
  assert.equal(argumentsProblem(b, {}), 'field "y" is required');
});

Deno.test("stripExtensions() removes x- keys at every level but keeps property names", () => {
  const schema = {
    type: "object",
    "x-magi": { argv: [] },
    properties: {
      "x-name": { type: "string", "x-hint": 1 },
      list: { type: "array", items: { "x-a": 1, type: "string" } },
    },
  };
  assert.deepEqual(stripExtensions(schema), {
    type: "object",
    properties: {
      "x-name": { type: "string" },
      list: { type: "array", items: { type: "string" } },
    },
  });
});
