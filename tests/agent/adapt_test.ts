import assert from "node:assert/strict";
import { adaptSchema, adaptTools, registryName } from "../../lib/agent/adapt.ts";

Deno.test("adaptTools() maps names providers refuse, and maps them back", () => {
  const adapted = adaptTools([
    { name: "read", description: "r", parameters: { type: "object", properties: {} } },
    { name: "fs.read", description: "f", parameters: { type: "object", properties: {} } },
    { name: "fs_read", description: "g", parameters: { type: "object", properties: {} } },
  ]);
  const names = adapted.tools.map((t) => t.name);
  assert.deepEqual(names, ["read", "fs_read_2", "fs_read"]);
  assert.equal(registryName(adapted, "fs_read_2"), "fs.read");
  assert.equal(registryName(adapted, "fs_read"), "fs_read");
  assert.equal(registryName(adapted, "unknown"), "unknown");
  for (const n of names) assert.match(n, /^[a-zA-Z0-9_-]{1,64}$/);
});

Deno.test("adaptSchema() inlines $ref and drops $defs and $schema", () => {
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: { path: { type: "string", description: "a path" } },
    properties: { from: { $ref: "#/$defs/path" }, to: { $ref: "#/$defs/path" } },
    required: ["from"],
  };
  assert.deepEqual(adaptSchema(schema), {
    type: "object",
    properties: {
      from: { type: "string", description: "a path" },
      to: { type: "string", description: "a path" },
    },
    required: ["from"],
  });
  assert.ok("$defs" in schema, "the input is not changed");
});

Deno.test("adaptSchema() turns a root union or a missing type into one object", () => {
  assert.deepEqual(
    adaptSchema({
      anyOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { b: { type: "number" } } },
      ],
    }),
    { type: "object", properties: { a: { type: "string" }, b: { type: "number" } } },
  );
  assert.deepEqual(adaptSchema({}), { type: "object", properties: {} });
});

Deno.test("adaptSchema() survives a recursive $ref", () => {
  const out = adaptSchema({
    type: "object",
    definitions: { node: { type: "object", properties: { next: { $ref: "#/definitions/node" } } } },
    properties: { head: { $ref: "#/definitions/node" } },
  });
  assert.deepEqual(out.properties, {
    head: { type: "object", properties: { next: {} } },
  });
});
