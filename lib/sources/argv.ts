/**
 * The `x-magi` (alias `x-snens`) mapping from a call's fields to a program's argv and stdin
 * (SPEC S4.6), and the generic interface (S4.5). argv is built from values, never through a
 * shell. The forms are documented in `tools/README.md`.
 *
 * @module
 */
import type { JsonSchema } from "../core/types.ts";

/** One item of `x-magi.argv`. */
export type ArgvItem =
  /** The field's value as a positional; an array gives one positional per element. */
  | { field: string }
  /** The flag when the boolean field is true. */
  | { flag: string; when_field: string }
  /**
   * The flag followed by the field's value (`--x V`, or `--x=V` with `join: "="`); an array
   * repeats the flag. With `optional`, an empty string gives the bare flag (`-i` of sed's
   * `-i[SUFFIX]`). With `pairs`, the field is an object and each entry gives the flag, its key
   * and its value (jq's `--arg NAME VALUE`).
   */
  | { flag: string; field: string; join?: string; optional?: boolean; pairs?: boolean }
  /** Fixed words, always present. */
  | { literal: string | string[] };

/** How stdin is fed: nothing, one field's raw value, or some fields as one JSON object. */
export type StdinMode =
  | { mode: "none" }
  | { mode: "field"; field: string }
  | { mode: "json"; fields: string[] };

/** A parsed `x-magi` mapping. */
export interface ArgvMapping {
  argv: ArgvItem[];
  stdin: StdinMode;
}

/** The arguments and stdin one call gives a program. */
export interface ProgramInput {
  args: string[];
  /** Absent: stdin is closed. */
  stdin?: string;
}

/** The extension key magi reads, and the seed's spelling accepted as its synonym. */
export const MAPPING_KEYS = ["x-magi", "x-snens"] as const;

/**
 * Reads the mapping from a schema.
 *
 * @returns the mapping, a default (no argv, stdin closed) when the schema has none, or a
 *   one-line reason when the mapping is malformed
 * @throws nothing
 */
export function readMapping(schema: JsonSchema): ArgvMapping | string {
  const raw = schema["x-magi"] ?? schema["x-snens"];
  if (raw === undefined) return { argv: [], stdin: { mode: "none" } };
  if (!isRecord(raw)) return "x-magi must be an object";
  const fields = isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  const known = (name: unknown): name is string =>
    typeof name === "string" && fields.includes(name);
  const argv: ArgvItem[] = [];
  const items = raw.argv ?? [];
  if (!Array.isArray(items)) return "x-magi.argv must be a list";
  for (const [i, item] of items.entries()) {
    const where = `x-magi.argv[${i}]`;
    if (!isRecord(item)) return `${where} must be an object`;
    if ("literal" in item) {
      const lit = item.literal;
      if (
        typeof lit !== "string" && !(Array.isArray(lit) && lit.every((x) => typeof x === "string"))
      ) {
        return `${where}.literal must be a string or a list of strings`;
      }
      argv.push({ literal: lit });
    } else if ("flag" in item) {
      if (typeof item.flag !== "string" || item.flag === "") {
        return `${where}.flag must be a string`;
      }
      if ("when_field" in item) {
        if (!known(item.when_field)) return `${where}.when_field names no property`;
        argv.push({ flag: item.flag, when_field: item.when_field });
      } else if ("field" in item) {
        if (!known(item.field)) return `${where}.field names no property`;
        if (item.join !== undefined && typeof item.join !== "string") {
          return `${where}.join must be a string`;
        }
        if (item.optional !== undefined && typeof item.optional !== "boolean") {
          return `${where}.optional must be true or false`;
        }
        if (item.pairs !== undefined && typeof item.pairs !== "boolean") {
          return `${where}.pairs must be true or false`;
        }
        argv.push({
          flag: item.flag,
          field: item.field,
          join: item.join as string | undefined,
          ...(item.optional ? { optional: true } : {}),
          ...(item.pairs ? { pairs: true } : {}),
        });
      } else return `${where} has "flag" without "field" or "when_field"`;
    } else if ("field" in item) {
      if (!known(item.field)) return `${where}.field names no property`;
      argv.push({ field: item.field });
    } else return `${where} is none of {field}, {flag, when_field}, {flag, field}, {literal}`;
  }
  const stdinRaw = raw.stdin ?? { mode: "none" };
  if (!isRecord(stdinRaw)) return "x-magi.stdin must be an object";
  let stdin: StdinMode;
  switch (stdinRaw.mode) {
    case "none":
      stdin = { mode: "none" };
      break;
    case "field":
      if (!known(stdinRaw.field)) {
        return 'x-magi.stdin with mode "field" needs "field" naming a property';
      }
      stdin = { mode: "field", field: stdinRaw.field };
      break;
    case "json": {
      const list = stdinRaw.fields;
      if (!Array.isArray(list) || !list.every(known)) {
        return 'x-magi.stdin with mode "json" needs "fields", a list of property names';
      }
      stdin = { mode: "json", fields: list as string[] };
      break;
    }
    default:
      return 'x-magi.stdin.mode must be "none", "field" or "json"';
  }
  return { argv, stdin };
}

function scalar(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function values(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value.map(scalar) : [scalar(value)];
}

/** Builds argv and stdin from validated arguments. */
export function buildInput(mapping: ArgvMapping, args: Record<string, unknown>): ProgramInput {
  const out: string[] = [];
  for (const item of mapping.argv) {
    if ("literal" in item) {
      out.push(...(typeof item.literal === "string" ? [item.literal] : item.literal));
    } else if ("when_field" in item) {
      if (args[item.when_field] === true) out.push(item.flag);
    } else if ("flag" in item) {
      const raw = args[item.field];
      if (item.pairs) {
        if (isRecord(raw)) {
          for (const [k, v] of Object.entries(raw)) out.push(item.flag, k, scalar(v));
        }
        continue;
      }
      for (const v of values(raw)) {
        if (item.optional && v === "") out.push(item.flag);
        else if (item.join !== undefined) out.push(item.flag + item.join + v);
        else out.push(item.flag, v);
      }
    } else {
      out.push(...values(args[item.field]));
    }
  }
  const input: ProgramInput = { args: out };
  const stdin = mapping.stdin;
  if (stdin.mode === "field") {
    const v = args[stdin.field];
    if (v !== undefined && v !== null) input.stdin = typeof v === "string" ? v : JSON.stringify(v);
  } else if (stdin.mode === "json") {
    const picked: Record<string, unknown> = {};
    for (const f of stdin.fields) if (args[f] !== undefined) picked[f] = args[f];
    input.stdin = JSON.stringify(picked);
  }
  return input;
}

/**
 * The generic interface's parameters (SPEC S4.5): `args` (a list of strings, or one string
 * split on spaces) and `stdin`, required when the help text mentions stdin.
 */
export function genericParameters(stdinRequired: boolean): JsonSchema {
  return {
    type: "object",
    properties: {
      args: {
        anyOf: [{ type: "array", items: { type: "string" } }, { type: "string" }],
        description: "Command-line arguments: a list, or one string split on spaces",
      },
      stdin: {
        type: "string",
        description: stdinRequired ? "Standard input (required)" : "Standard input",
      },
    },
    ...(stdinRequired ? { required: ["stdin"] } : {}),
  };
}

/** Builds argv and stdin for the generic interface. */
export function buildGenericInput(args: Record<string, unknown>): ProgramInput {
  const raw = args.args;
  const list = typeof raw === "string"
    ? raw.split(" ").filter((s) => s !== "")
    : Array.isArray(raw)
    ? raw.map(String)
    : [];
  const input: ProgramInput = { args: list };
  if (typeof args.stdin === "string") input.stdin = args.stdin;
  return input;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
