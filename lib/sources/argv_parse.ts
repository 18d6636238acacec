/**
 * The `x-magi` argv mapping in reverse (SPEC S4.6): a shell-style command line back into a
 * call's arguments, so `magi builtin grep TODO src --limit 5` becomes
 * `{pattern: "TODO", paths: ["src"], limit: 5}`. Pure: stdin is handed in as text.
 *
 * @module
 */
import type { ArgvMapping } from "./argv.ts";
import type { JsonSchema } from "../core/types.ts";

/** A command line that does not fit the mapping; the message says what is wrong. */
export class ArgvError extends Error {
  override name = "ArgvError";
}

function typeOf(schema: JsonSchema, field: string): string {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const t = props[field]?.type;
  return typeof t === "string" ? t : "string";
}

function itemType(schema: JsonSchema, field: string): string {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const items = props[field]?.items as JsonSchema | undefined;
  return typeof items?.type === "string" ? items.type : "string";
}

function convert(text: string, type: string, what: string): unknown {
  if (type === "integer" || type === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) {
      throw new ArgvError(
        `${what} expects ${type === "integer" ? "a whole number" : "a number"}, got "${text}"`,
      );
    }
    return n;
  }
  if (type === "boolean") {
    if (text === "true") return true;
    if (text === "false") return false;
    throw new ArgvError(`${what} expects true or false, got "${text}"`);
  }
  return text;
}

/**
 * Parses argv against a mapping: `--flag VALUE` / `--flag=VALUE` for `{flag, field}` items
 * (repeatable for array fields), a bare `--flag` for `{flag, when_field}`, and positionals
 * filling `{field}` items in order (an array field takes every remaining positional).
 * `--` ends the flags. Literal items are skipped when present at their place.
 *
 * @param stdin the text on stdin, used when the mapping's stdin mode is `field` or `json`
 * @throws ArgvError for an unknown flag, a missing value, a bad number, extra positionals or
 *   stdin that is not a JSON object when JSON is expected
 */
export function parseArgv(
  mapping: ArgvMapping,
  schema: JsonSchema,
  argv: readonly string[],
  stdin?: string,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const positionals: string[] = [];
  const literals = new Set(
    mapping.argv.flatMap((i) => "literal" in i ? [i.literal].flat() : []),
  );
  let flagsOver = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (flagsOver || !word.startsWith("-") || word === "-" || /^-\d/.test(word)) {
      positionals.push(word);
      continue;
    }
    if (word === "--") {
      flagsOver = true;
      continue;
    }
    if (literals.has(word)) continue;
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(0, eq) : word;
    const bool = mapping.argv.find((m) => "when_field" in m && m.flag === name);
    if (bool && "when_field" in bool) {
      args[bool.when_field] = eq > 0 ? convert(word.slice(eq + 1), "boolean", name) : true;
      continue;
    }
    const valued = mapping.argv.find((m) => "field" in m && "flag" in m && m.flag === name);
    if (!valued || !("field" in valued)) throw new ArgvError(`unknown option "${name}"`);
    let value: string;
    if (eq > 0) value = word.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new ArgvError(`option "${name}" needs a value`);
    const field = valued.field;
    if (typeOf(schema, field) === "array") {
      const list = (args[field] as unknown[] | undefined) ?? [];
      list.push(convert(value, itemType(schema, field), name));
      args[field] = list;
    } else {
      args[field] = convert(value, typeOf(schema, field), name);
    }
  }
  const slots = mapping.argv.filter((m) => "field" in m && !("flag" in m)) as { field: string }[];
  for (const [n, slot] of slots.entries()) {
    if (positionals.length === 0) break;
    if (typeOf(schema, slot.field) === "array") {
      const take = positionals.splice(0, positionals.length - (slots.length - n - 1));
      args[slot.field] = take.map((p) => convert(p, itemType(schema, slot.field), slot.field));
    } else {
      args[slot.field] = convert(positionals.shift()!, typeOf(schema, slot.field), slot.field);
    }
  }
  if (positionals.length > 0) {
    throw new ArgvError(`unexpected argument "${positionals[0]}"`);
  }
  const mode = mapping.stdin;
  if (mode.mode === "field" && stdin !== undefined) args[mode.field] = stdin;
  if (mode.mode === "json" && stdin !== undefined && stdin.trim() !== "") {
    let data: unknown;
    try {
      data = JSON.parse(stdin);
    } catch (error) {
      throw new ArgvError(`stdin is not JSON: ${(error as Error).message}`);
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      throw new ArgvError("stdin must hold a JSON object");
    }
    for (const f of mode.fields) {
      if (f in data) args[f] = (data as Record<string, unknown>)[f];
    }
  }
  return args;
}
