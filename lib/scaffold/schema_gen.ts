/**
 * Turning a {@link HelpModel} into a tool's `schema.json`: one property per option and
 * positional, plus `args` (further arguments, the generic escape hatch) and `stdin`, with an
 * `x-magi` mapping that uses only the argv forms `lib/sources/argv.ts` reads: `{field}`,
 * `{flag, when_field}`, `{flag, field, join?}` and `{literal}`.
 *
 * @module
 */
import type { ArgvItem } from "../sources/argv.ts";
import { readMapping } from "../sources/argv.ts";
import { schemaProblem } from "../core/json_schema.ts";
import type { JsonSchema } from "../core/types.ts";
import type { HelpModel, HelpOption, HelpPositional } from "./help_parse.ts";

/** What {@link schemaFromModel} made, and what it says about it. */
export interface GeneratedSchema {
  schema: JsonSchema;
  /** One line per typed parameter: `"-l, --lines" → lines (boolean)`. */
  guessed: string[];
}

/** Names a generated property never takes: the call's own fields and the two fixed ones. */
const RESERVED = new Set(["args", "stdin", "cwd", "timeout_seconds"]);

/**
 * Why a help model gives no typed schema, or undefined when it does: a text with no option
 * and no readable usage line is better served by the generic `args` and `stdin`.
 */
export function genericReason(model: HelpModel): string | undefined {
  if (model.options.length === 0 && model.positionals === null) {
    return "nothing in its help text could be typed reliably";
  }
  return undefined;
}

/** Options the help text lists that the schema leaves to `args` (see `budget.ts`). */
export interface LeftOptions {
  /** The options not typed, most likely to matter first. */
  left: HelpOption[];
  /** The program as the description names it: `tar`, `git log`. */
  program: string;
}

/**
 * Makes the schema of a typed tool from a help model.
 *
 * @param leftOut options of the program not in `model` (not typed): the `args` description
 *   then says they go there, before the positionals, and names the first few
 * @returns the schema (checked with `schemaProblem` and `readMapping`) and what was guessed
 * @throws Error when the result is not a usable schema (a bug in this module, not in the text)
 */
export function schemaFromModel(model: HelpModel, leftOut?: LeftOptions): GeneratedSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const optionArgv: ArgvItem[] = [];
  const positionalArgv: ArgvItem[] = [];
  const guessed: string[] = [];
  const taken = new Set<string>(RESERVED);
  const unique = (base: string, suffix: string): string => {
    let name = base;
    if (taken.has(name)) name = `${base}_${suffix}`;
    for (let i = 2; taken.has(name); i++) name = `${base}_${suffix}_${i}`;
    taken.add(name);
    return name;
  };

  const positionals = model.positionals ?? [];
  const program = (model.usage ?? "").split(" ")[0].split("/").pop() ?? "";
  const positionalNames = positionals.map((p) => unique(positionalField(p, program), "arg"));
  // An expression program (find, test): the expression's words come last, and find's
  // predicates (`-name PATTERN`, single dash, not in the synopsis) go just before them,
  // after the paths.
  const expression = positionals.findIndex((p) => EXPRESSION.test(p.name));
  const predicateArgv: ArgvItem[] = [];
  const usage = model.usage ?? "";
  for (const option of model.options) {
    const inSynopsis = option.names.some((n) => usage.includes(n));
    const predicate = expression >= 0 && !inSynopsis && /^-[^-]/.test(option.flag);
    if (predicate && option.flag.length === 2) continue; // test's `-f FILE`: in the expression
    const names = optionFields(option);
    const field = unique(names.find((n) => !taken.has(n)) ?? names[0], "option");
    properties[field] = optionProperty(option);
    (predicate ? predicateArgv : optionArgv).push(optionItem(option, field));
    if (option.required) required.push(field);
    guessed.push(`${option.names.join(", ")} → ${field} (${describeType(properties[field])})`);
  }
  positionals.forEach((p, i) => {
    const field = positionalNames[i];
    properties[field] = i === expression ? expressionProperty(p) : positionalProperty(p);
    if (i === expression) positionalArgv.push(...predicateArgv);
    positionalArgv.push({ field });
    if (p.required) required.push(field);
    guessed.push(
      `${p.name} → ${field} (${p.required ? "required" : "optional"} ${
        describeType(properties[field])
      })`,
    );
  });
  const ordered: Record<string, JsonSchema> = {};
  for (const name of positionalNames) ordered[name] = properties[name];
  for (const [name, prop] of Object.entries(properties)) ordered[name] ??= prop;
  ordered.args = {
    type: "array",
    items: { type: "string" },
    description: leftOut && leftOut.left.length > 0
      ? leftDescription(leftOut, model.positionals === null, required.length === 0)
      : model.positionals === null
      ? "Arguments, given as they are (the usage line could not be typed)"
      : "Further arguments, given as they are after the options above" +
        (positionals.length > 0 ? " and before the positionals" : ""),
  };
  ordered.stdin = { type: "string", description: "Standard input for the program" };
  const schema: JsonSchema = {
    type: "object",
    properties: ordered,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    "x-magi": {
      argv: [...optionArgv, { field: "args" }, ...positionalArgv],
      stdin: { mode: "field", field: "stdin" },
    },
  };
  const problem = schemaProblem(schema);
  if (problem) throw new Error(`The generated schema is not usable: ${problem}`);
  const mapping = readMapping(schema);
  if (typeof mapping === "string") {
    throw new Error(`The generated x-magi is not usable: ${mapping}`);
  }
  return { schema, guessed };
}

/** How many left-out options the `args` description names. */
const LEFT_EXAMPLES = 6;

/** The `args` description when options were left out of the schema. */
function leftDescription(leftOut: LeftOptions, untyped: boolean, callable: boolean): string {
  const { left, program } = leftOut;
  const shown = left.slice(0, LEFT_EXAMPLES).map((o) =>
    o.value ? `${o.flag}${joinOf(o) === " " ? " " : joinOf(o)}${o.value.metavar}` : o.flag
  );
  const more = left.length > LEFT_EXAMPLES ? ", …" : "";
  const where = untyped ? "all arguments" : "before the positionals";
  const help = callable ? `; args ["--help"] lists them all` : "";
  return `More options of ${program} (${left.length} not typed above, such as ${
    shown.join(", ")
  }${more}) and other words, as argv words placed ${where}${help}`;
}

/** A positional that is an expression of words: find's `[expression]`, test's `EXPRESSION`. */
const EXPRESSION = /^(expression|expr)$/i;

/** Value names too vague to name a property. */
const VAGUE = /^(value|arg|args|argument|string|str|n|num|number|int|integer|x|val|opt|option|s)$/i;

/** Words a description starts with that do not name what the option is. */
const LEAD_WORDS = new Set(
  "specifies specify sets set use uses print prints show shows display displays the a an to do dont don't only be is enable enables"
    .split(" "),
);
const STOP_WORDS = new Set(
  "of to for in on with from as and or by into at when if than that which instead is are the a an"
    .split(" "),
);

/**
 * A property name from an option: its long name in snake_case; for a one-letter option, the
 * name of its value (`-b bits` → bits), else the first words of its description (`-q` "Silence
 * ssh-keygen" → silence); the letter only when neither says anything.
 */
function optionFields(option: HelpOption): string[] {
  const base = option.flag.replace(/^-+/, "");
  const long = option.flag.startsWith("--") || base.length > 1;
  const names: string[] = [];
  if (long) names.push(snake(base));
  else {
    const metavar = option.value?.metavar ?? "";
    if (/^[A-Za-z][\w-]*$/.test(metavar) && !VAGUE.test(metavar) && metavar.length > 1) {
      names.push(snake(metavar));
    }
    const said = /^The \S+ option\b/.test(option.description) ? "" : option.description;
    const words = said.toLowerCase().replace(/'/g, "").replace(/[^a-z0-9 -]+/g, " ").split(/\s+/)
      .filter((w) => w !== "" && w !== "-");
    while (words.length > 0 && LEAD_WORDS.has(words[0])) words.shift();
    const kept: string[] = [];
    for (const w of words) {
      if (STOP_WORDS.has(w) || kept.length === 2) break;
      kept.push(w);
    }
    // A longer name for when the short one is taken: `sort` (-S), then `sort_by_time` (-t).
    const longer = words.filter((w) => !/^(the|a|an)$/.test(w)).slice(0, 3);
    names.push(snake(kept.join("_")), snake(longer.join("_")));
  }
  const out = names.filter((n) => n.length >= 2).map((n) => /^[0-9]/.test(n) ? `opt_${n}` : n);
  return out.length > 0 ? out : [/^[0-9]/.test(base) ? `opt_${base}` : base];
}

function snake(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
}

/** An expression: its words as they are, options included (`-name`, `-o`, `(`). */
function expressionProperty(p: HelpPositional): JsonSchema {
  return {
    type: "array",
    items: { type: "string" },
    description: p.description ||
      "The expression, one word per item, as on the command line (e.g. -name, '*.ts', -o, -type, f)",
  };
}

/** A property name from a positional: snake_case, plural when it takes several values. */
function positionalField(p: HelpPositional, program = ""): string {
  let words = p.name.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "");
  // `jq filter` → filter; `script-only-if-no-other-script` → script.
  if (words.length > 1 && words[0] === program) words = words.slice(1);
  if (words.length >= 4) words = words.slice(0, 1);
  let name = words.join("_");
  if (name === "" || /^[0-9]/.test(name)) name = `arg_${name}`;
  if (name === "args") name = "arguments";
  if (p.repeated && !name.endsWith("s")) name += "s";
  return name;
}

function valueSchema(option: HelpOption): JsonSchema {
  const v = option.value!;
  const item: JsonSchema = v.enum ? { type: "string", enum: v.enum } : { type: v.type };
  if (option.default !== undefined) {
    if (v.enum?.includes(option.default)) item.default = option.default;
    else if (v.type === "integer" && /^-?\d+$/.test(option.default)) {
      item.default = Number(option.default);
    } else if (v.type === "number" && /^-?\d+(\.\d+)?$/.test(option.default)) {
      item.default = Number(option.default);
    }
  }
  return item;
}

function optionProperty(option: HelpOption): JsonSchema {
  let description = option.description || `The ${option.flag} option`;
  if (!option.value) return { type: "boolean", description };
  if (option.value.pairs) {
    const [key, value] = option.value.metavar.split(" ");
    return {
      type: "object",
      additionalProperties: { type: "string" },
      description:
        `${description} (an object: each ${key}: ${value} entry gives ${option.flag} ${key} ${value})`,
    };
  }
  const item = valueSchema(option);
  if (bareWhenEmpty(option)) description += ` ("" gives the bare ${option.flag})`;
  else if (option.value.optional) {
    description += ` (sent as ${option.flag}${joinOf(option)}VALUE; the bare flag goes in args)`;
  }
  if (option.repeatable) {
    description += " (one value per use of the flag)";
    return { type: "array", items: item, description };
  }
  return { ...item, description };
}

/** How the value follows the flag: "=" as the text wrote it, "" for `-xVALUE`, else " ". */
function joinOf(option: HelpOption): string {
  const v = option.value!;
  const short = /^-[^-]$/.test(option.flag);
  if (v.equals) return short ? "" : "=";
  return " ";
}

function optionItem(option: HelpOption, field: string): ArgvItem {
  if (!option.value) return { flag: option.flag, when_field: field };
  if (option.value.pairs) return { flag: option.flag, field, pairs: true };
  const join = joinOf(option);
  const item: ArgvItem = join === " "
    ? { flag: option.flag, field }
    : { flag: option.flag, field, join };
  return bareWhenEmpty(option) ? { ...item, optional: true } : item;
}

/** An optional string value joined to its flag: an empty string sends the bare flag. */
function bareWhenEmpty(option: HelpOption): boolean {
  const v = option.value;
  return v !== undefined && v.optional && v.type === "string" && !v.enum && joinOf(option) !== " ";
}

/**
 * A positional value may not start with "-": the program would read it as an option
 * (`tar … --checkpoint-action=exec=…` runs a command). Options have fields of their own,
 * and `args` is the open door, which the policy judges.
 */
const NOT_AN_OPTION = "^[^-]";

function positionalProperty(p: HelpPositional): JsonSchema {
  const description = p.description || `The ${p.name} argument`;
  if (p.repeated) {
    return { type: "array", items: { type: "string", pattern: NOT_AN_OPTION }, description };
  }
  return { type: "string", pattern: NOT_AN_OPTION, description };
}

function describeType(prop: JsonSchema): string {
  if (prop.type === "array") {
    const items = prop.items as JsonSchema;
    return `list of ${items.enum ? "one of " + (items.enum as string[]).join("|") : items.type}`;
  }
  return prop.enum ? `one of ${(prop.enum as string[]).join("|")}` : String(prop.type);
}
