/**
 * JSON Schema helpers: checking a tool's schema at load time, validating a call's arguments
 * before anything runs (SPEC S4.7), and removing extension keys from what the model sees.
 * Validation is Ajv's (draft 2020-12 by default, draft-07 when a schema's `$schema` says so).
 *
 * @module
 */
import { requireModule } from "./lazy_require.ts";
import type { Ajv2020 } from "ajv/dist/2020.js";
import type AjvDraft7 from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { JsonSchema } from "./types.ts";
import { writePrivateFile } from "./private.ts";

const options = { strict: false, allErrors: false, validateFormats: false } as const;
let ajv2020: Ajv2020 | undefined;
let ajv7: AjvDraft7.default | undefined;

/**
 * Ajv, loaded on first use: it takes about 100 ms to load, and a warm `magi tools` needs no
 * validation at all. `require` keeps the callers synchronous.
 */
// deno-lint-ignore no-explicit-any
const load = requireModule as (name: string) => any;

/**
 * Checks that passed in earlier runs (their JSON text), so a warm start needs no Ajv. Kept
 * only while {@link useCheckCache} has named a file.
 */
let passed: { path: string; before: Set<string>; now: Set<string> } | undefined;
const CHECK_CACHE_VERSION = "ajv-8.17.1/2";
/** The most checks the cache file keeps. */
const CHECK_CACHE_MAX = 2000;

/**
 * Remembers, in the file at `path`, which schemas passed {@link schemaProblem} and which
 * values passed {@link isValid} (as hashes of their JSON text), so that a later
 * process skips Ajv for them. Reads the file
 * now; {@link saveCheckCache} writes it back. An unreadable file is an empty cache.
 */
export function useCheckCache(path: string | undefined): void {
  passed = undefined;
  if (!path) return;
  let before: string[] = [];
  try {
    const data = JSON.parse(Deno.readTextFileSync(path));
    if (data?.version === CHECK_CACHE_VERSION && Array.isArray(data.passed)) before = data.passed;
  } catch {
    // No cache yet: every check runs.
  }
  passed = { path, before: new Set(before), now: new Set() };
}

/** Writes the cache named by {@link useCheckCache} back when a new check passed. */
export function saveCheckCache(): void {
  if (!passed || [...passed.now].every((k) => passed!.before.has(k))) return;
  const all = [...new Set([...passed.before, ...passed.now])].slice(-CHECK_CACHE_MAX);
  try {
    writePrivateFile(
      passed.path,
      JSON.stringify({ version: CHECK_CACHE_VERSION, passed: all }),
    );
  } catch {
    // A read-only cache folder only costs Ajv next time.
  }
}

/**
 * A 106-bit hash of a string (two 53-bit cyrb53 hashes), as hex. Not cryptographic; node's
 * crypto module would add more to start-up than the hashing itself costs.
 */
function hash(text: string): string {
  const part = (seed: number): string => {
    let h1 = 0xdeadbeef ^ seed;
    let h2 = 0x41c6ce57 ^ seed;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
  };
  return part(1) + part(2);
}

/** Whether the check `key` passed before; `check` runs only when not, and is remembered. */
function remembered(key: () => string, check: () => boolean): boolean {
  if (!passed) return check();
  // A hash: config values (headers, env) may hold secrets, which must not reach a cache file.
  const k = hash(key());
  if (passed.before.has(k)) {
    passed.now.add(k);
    return true;
  }
  const ok = check();
  if (ok) passed.now.add(k);
  return ok;
}

function ajvFor(schema: JsonSchema): Ajv2020 | AjvDraft7.default {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  if (/draft-0[4-7]/.test(dialect)) {
    const Ajv = load("ajv").default as typeof AjvDraft7.default;
    return ajv7 ??= new Ajv(options);
  }
  const { Ajv2020: Ajv } = load("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 };
  return ajv2020 ??= new Ajv(options);
}

/**
 * A schema without its top-level `$id`: Ajv keeps every compiled schema by its `$id`, so two
 * tools sharing one (or one tool compiled twice) would fail with "already exists".
 */
function withoutId(schema: JsonSchema): JsonSchema {
  if (!("$id" in schema)) return schema;
  const { $id: _id, ...rest } = schema;
  return rest;
}

/**
 * Checks that a value is a usable parameter schema: a JSON object with `type: "object"`,
 * valid against its JSON Schema meta-schema.
 *
 * @returns null when usable, else the reason in one line
 */
export function schemaProblem(schema: unknown): string | null {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return "the schema is not a JSON object";
  }
  const s = schema as JsonSchema;
  if (s.type !== "object") return 'the schema has no "type": "object"';
  let problem: string | null = null;
  remembered(() => "schema " + JSON.stringify(s), () => {
    const ajv = ajvFor(s);
    try {
      if (!ajv.validateSchema(stripExtensions(s))) {
        problem = `the schema is not valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
      } else {
        // Valid by the meta-schema yet unusable: a $ref that resolves nowhere, a pattern
        // that is no regular expression. Found now, not at the first call.
        try {
          ajv.compile(withoutId(stripExtensions(s)));
        } catch (error) {
          problem = `the schema cannot be used: ${error instanceof Error ? error.message : error}`;
        }
      }
    } catch (error) {
      problem = `the schema cannot be checked: ${error instanceof Error ? error.message : error}`;
    }
    return problem === null;
  });
  return problem;
}

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/**
 * Whether a value is valid against a schema (compiled once per schema object).
 *
 * @throws Error when the schema itself cannot be compiled
 */
export function isValid(schema: JsonSchema, value: unknown): boolean {
  return remembered(() => "value " + JSON.stringify([schema, value]), () => {
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, validate = ajvFor(schema).compile(withoutId(schema)));
    return validate(value) === true;
  });
}

/**
 * Validates arguments against a parameter schema (compiled once per schema object).
 *
 * @returns null when valid, else one line naming the field, such as
 *   `field "path" is required`
 */
export function argumentsProblem(schema: JsonSchema, args: unknown): string | null {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajvFor(schema).compile(withoutId(schema));
    } catch (error) {
      return `the tool's schema cannot be used: ${error instanceof Error ? error.message : error}`;
    }
    compiled.set(schema, validate);
  }
  if (validate(args)) return null;
  return describeError(validate.errors?.[0]);
}

function fieldName(path: string): string {
  return path.replace(/^\//, "").replaceAll("/", ".").replaceAll("~1", "/").replaceAll("~0", "~");
}

function describeError(error: ErrorObject | undefined): string {
  if (!error) return "the arguments do not match the schema";
  const at = fieldName(error.instancePath);
  const prefix = at ? `${at}.` : "";
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `field "${prefix}${params.missingProperty}" is required`;
    case "additionalProperties":
      return `field "${prefix}${params.additionalProperty}" is not a parameter of this tool`;
    case "type":
      return at ? `field "${at}" must be ${params.type}` : `the arguments must be ${params.type}`;
    case "enum":
      return `field "${at}" must be one of: ${
        (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")
      }`;
    default:
      return at ? `field "${at}" ${error.message}` : `the arguments ${error.message}`;
  }
}

/** Keywords whose value is a map of name → subschema. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Keywords whose value is a subschema or a list of them. */
const SCHEMA_SLOTS = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "anyOf",
  "allOf",
  "oneOf",
  "prefixItems",
];

/**
 * Returns a copy of a schema without extension keys (`x-…`, such as `x-magi` and `x-snens`)
 * at any level; property names that start with `x-` are kept.
 */
export function stripExtensions(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-")) continue;
    if (SCHEMA_MAPS.includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isObject(v) ? stripExtensions(v) : v]),
      );
    } else if (SCHEMA_SLOTS.includes(key)) {
      out[key] = Array.isArray(value)
        ? value.map((v) => isObject(v) ? stripExtensions(v) : v)
        : isObject(value)
        ? stripExtensions(value)
        : value;
    } else {
      out[key] = value;
    }
  }
  return out;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
