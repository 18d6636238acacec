/**
 * The one place where the registry's declarations become what a provider accepts: names
 * every provider takes (`^[a-zA-Z0-9_-]{1,64}$`, mapped there and back) and parameter
 * schemas with `type: "object"` at the root, local `$ref`s inlined, no root unions
 * (Anthropic rejects them) and no `strict` mode (OpenAI's needs every property required).
 *
 * @module
 */
import type { Declaration, JsonSchema } from "../core/types.ts";

const SAFE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The declarations in a provider's form, and the way back from its names. */
export interface AdaptedTools {
  tools: Declaration[];
  /** Provider-safe name → registry name. */
  toRegistry: Map<string, string>;
  /** Registry name → provider-safe name. */
  toProvider: Map<string, string>;
}

/**
 * Adapts declarations for a provider: a name outside `^[a-zA-Z0-9_-]{1,64}$` gets its other
 * characters replaced by `_`, is cut to 64 characters and made unique with a `_2`, `_3`…
 * suffix; every schema goes through {@link adaptSchema}.
 */
export function adaptTools(declarations: readonly Declaration[]): AdaptedTools {
  const toRegistry = new Map<string, string>();
  const toProvider = new Map<string, string>();
  const taken = new Set(declarations.map((d) => d.name).filter((n) => SAFE_NAME.test(n)));
  const tools: Declaration[] = [];
  for (const d of declarations) {
    let name = d.name;
    if (!SAFE_NAME.test(name)) {
      const base = (name.replace(/[^a-zA-Z0-9_-]/g, "_") || "tool").slice(0, 64);
      name = base;
      for (let i = 2; taken.has(name); i++) name = base.slice(0, 64 - `_${i}`.length) + `_${i}`;
      taken.add(name);
    }
    toRegistry.set(name, d.name);
    toProvider.set(d.name, name);
    tools.push({ name, description: d.description, parameters: adaptSchema(d.parameters) });
  }
  return { tools, toRegistry, toProvider };
}

/** Maps a provider's tool name back to the registry's (unknown names pass unchanged). */
export function registryName(adapted: AdaptedTools, name: string): string {
  return adapted.toRegistry.get(name) ?? name;
}

/** Maps a registry name to the provider's (unknown names are made safe the same way). */
export function providerName(adapted: AdaptedTools, name: string): string {
  return adapted.toProvider.get(name) ?? (name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) ||
    "tool");
}

/**
 * Makes a parameter schema every provider accepts: local `$ref`s (`#/$defs/…`,
 * `#/definitions/…`) inlined (a cycle becomes `{}`), `$schema`, `$id`, `$defs` and
 * `definitions` removed, and a root that is not a plain object — a union, or no `type` —
 * turned into `{type: "object", properties}` with the union's properties merged and none
 * required. The input is not changed.
 */
export function adaptSchema(schema: JsonSchema): JsonSchema {
  const defs = {
    ...(schema.definitions as Record<string, JsonSchema> | undefined),
    ...(schema.$defs as Record<string, JsonSchema> | undefined),
  };
  const inlined = inline(schema, defs, new Set()) as JsonSchema;
  for (const key of ["$schema", "$id", "$defs", "definitions"]) delete inlined[key];
  const union = (inlined.anyOf ?? inlined.oneOf) as JsonSchema[] | undefined;
  if (inlined.type === "object" && !union) {
    if (typeof inlined.properties !== "object") inlined.properties = {};
    return inlined;
  }
  const properties: Record<string, unknown> = {
    ...(inlined.properties as Record<string, unknown> | undefined),
  };
  for (const branch of Array.isArray(union) ? union : []) {
    Object.assign(properties, (branch?.properties ?? {}) as Record<string, unknown>);
  }
  const out: JsonSchema = { type: "object", properties };
  if (typeof inlined.description === "string") out.description = inlined.description;
  if (!union && Array.isArray(inlined.required)) out.required = inlined.required;
  return out;
}

function inline(value: unknown, defs: Record<string, JsonSchema>, seen: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => inline(v, defs, seen));
  if (typeof value !== "object" || value === null) return value;
  const obj = value as Record<string, unknown>;
  if (typeof obj.$ref === "string") {
    const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(obj.$ref);
    const name = m ? decodeURIComponent(m[1]).replace(/~1/g, "/").replace(/~0/g, "~") : "";
    const target = defs[name];
    if (!target || seen.has(name)) return {};
    const { $ref: _ref, ...rest } = obj;
    const resolved = inline(target, defs, new Set([...seen, name])) as Record<string, unknown>;
    return { ...resolved, ...(inline(rest, defs, seen) as Record<string, unknown>) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = k === "$defs" || k === "definitions" ? v : inline(v, defs, seen);
  }
  return out;
}
