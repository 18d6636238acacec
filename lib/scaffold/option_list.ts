/**
 * Reading option lists for `magi new` (`-x, --long=VALUE  text` in its many spellings): one
 * option per entry, its value and type, and its description trimmed to one line.
 *
 * @module
 */
import type { HelpOption, OptionValue, Skipped } from "./help_model.ts";

/** Longest description kept, in characters. */
export const MAX_DESCRIPTION = 200;

/** An option name at the start of a text: `-x`, `--long-name`, `-name` (Go), `-?`. */
const NAME = /^--?[A-Za-z0-9?][\w.?]*(?:-[\w.?]+)*/;
const GAP = /^(?:\s{2,}|\t)/;
const INTEGER_METAVARS =
  /^(n|num|number|int|integer|count|cols|columns|depth|port|uint\d*|int\d*|jobs|levels?|bits|rounds|lines|bytes|max[-_]?\w*|size|width|height|retries|limit|times|fd|pid|nproc)$/i;
const NUMBER_METAVARS = /^(float|float\d+|decimal|double|seconds|secs|ratio)$/i;
const BOOLEAN_METAVARS = /^(bool|boolean)$/i;
const LIST_TYPES = /^(strings|stringArray|stringSlice|list|intSlice|stringToString)$/;
const REPEAT_TEXT =
  /\b(can|may) be (repeated|given more than once|specified (multiple|more than once|several)|used (multiple|more than once)|passed multiple)|\b(repeatable)\b|multiple times/i;

/** Whether a trimmed line starts with an option name (not a bare `-` or `--`). */
export function isOptionLine(trimmed: string): boolean {
  return NAME.test(trimmed) && !/^--?\s/.test(trimmed);
}

/** An option spec as written: names, value, and the description text on the same line. */
export interface Spec {
  names: string[];
  value?: OptionValue;
  repeatable: boolean;
  /** The description text on the same line, if any. */
  rest: string;
  /** A kubectl-style `--name=DEFAULT:` line. */
  colonDefault?: string;
  negation?: string;
  /** The description followed the names after one space only (the spec overflowed). */
  overflow?: boolean;
}

/** The bracket group at the start of a text, with nesting: `[=[host:]port]`; "" if unbalanced. */
function balanced(s: string): string {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "[") depth++;
    else if (s[i] === "]" && --depth === 0) return s.slice(0, i + 1);
  }
  return "";
}

/** Reads one option spec from the start of a trimmed line; a string is why it is unclear. */
export function parseSpec(line: string): Spec | string | null {
  const spec: Spec = { names: [], repeatable: false, rest: "" };
  let s = line;
  let sawBracketValue = false;
  while (true) {
    const m = NAME.exec(s);
    if (!m) {
      return spec.names.length === 0 ? null : `cannot read the text after "${spec.names.at(-1)}"`;
    }
    const name = m[0].replace(/[.]+$/, "");
    const dotted = m[0].length - name.length;
    s = s.slice(name.length);
    if (dotted >= 3 || s.startsWith("...")) {
      spec.repeatable = true;
      s = s.replace(/^\.+/, "");
    }
    spec.names.push(name);
    // A value joined with "=" or in "[=...]".
    let vm: RegExpExecArray | null = null;
    const group = s.startsWith("[=") ? balanced(s) : "";
    if ((vm = /^\[([A-Za-z][\w-]*)\](?=$|[\s,])/.exec(s)) && /^-[^-]$/.test(name)) {
      // sed's `-i[SUFFIX]`: an optional value joined to a short flag.
      spec.value = valueOf(vm[1], true, true);
      s = s.slice(vm[0].length);
    } else if (group !== "" && !/\s/.test(group)) {
      const inner = group.slice(2, -1);
      spec.value = valueOf(inner === "..." ? "VALUE" : inner, true, true);
      s = s.slice(group.length);
      if ((inner.endsWith("...") && inner !== "...") || s.startsWith("...")) spec.repeatable = true;
      s = s.replace(/^\.\.\./, "");
    } else if ((vm = /^=(\S*)/.exec(s))) {
      let v = vm[1].replace(/,$/, "");
      if (v === "...") v = "VALUE";
      if (v.endsWith(":")) {
        spec.colonDefault = v.slice(0, -1).replace(/^'(.*)'$/, "$1");
        v = "";
      }
      if (spec.colonDefault === undefined) {
        spec.value = valueOf(v === "" ? "VALUE" : v, false, true);
      }
      s = s.slice(vm[0].length);
      if (vm[1].endsWith(",")) s = "," + s;
    } else if ((vm = /^ ((?:<[^>]*>|\[[^\]]*\]|\{[^}]*\})(?:\.\.\.)?)/.exec(s))) {
      const raw = vm[1];
      const optional = raw.startsWith("[") && !/^\[[^<]*\|/.test(raw);
      spec.value = valueOf(raw, optional, false);
      if (raw.endsWith("...") || /\w\.\.\.[>\]]$/.test(raw)) spec.repeatable = true;
      s = s.slice(vm[0].length);
      sawBracketValue = true;
    } else if ((vm = /^<([^>]+)>/.exec(s))) {
      spec.value = valueOf(vm[1], false, false);
      s = s.slice(vm[0].length);
    } else if (
      (vm =
        /^ ([A-Za-z][\w.:=-]*(?:\[[^\]\s]*\])?)(\.\.\.)?(?=$|\s{2,}|\t|,\s*-|\s+\|\s*-|\s*\/\s*-)/
          .exec(s))
    ) {
      // An uppercase metavar (FILE), a cobra type (string) or a click type (TEXT).
      spec.value = valueOf(vm[1], false, false);
      if (vm[2] || LIST_TYPES.test(vm[1])) spec.repeatable = true;
      s = s.slice(vm[0].length);
    } else if ((vm = /^ <?([A-Za-z][\w:-]*)>? <?([A-Za-z][\w:-]*)>?(?=\s{2,}|\t|$)/.exec(s))) {
      // Two values: a name and a value (`--arg name value`, `-fprintf file format`).
      spec.value = { ...valueOf(`${vm[1]} ${vm[2]}`, false, false), pairs: true };
      s = s.slice(vm[0].length);
    }
    const sep = /^(\s*,\s*|\s*\|\s*|\s+\/\s+| (?=-))/.exec(s);
    const following = NAME.exec(s.slice(sep?.[0].length ?? 0))?.[0];
    // Names side by side with one space are two spellings only when one is short and one long
    // (`-v --verbose`); find's `-nouser -nogroup -path PATTERN` lists three options.
    const spelling = sep?.[0] !== " " || following === undefined ||
      (/^-[^-]$/.test(name) !== /^-[^-]$/.test(following) && following.startsWith("--"));
    if (sep && following !== undefined && spelling) {
      if (sep[0].includes("/")) {
        const neg = NAME.exec(s.slice(sep[0].length))![0];
        spec.negation = neg;
        s = s.slice(sep[0].length + neg.length);
        break;
      }
      s = s.slice(sep[0].length);
      continue;
    }
    break;
  }
  if (new Set(spec.names).size < spec.names.length) {
    // sort's "-c, --check, --check=diagnose-first": a flag with one literal variant.
    spec.names = [...new Set(spec.names)];
    delete spec.value;
  }
  if (s === "" || s.trim() === "" || s === ":") spec.rest = "";
  else if (GAP.test(s)) spec.rest = s.trim();
  else if (sawBracketValue && /^ \S/.test(s)) spec.rest = s.trim();
  else if (line.length - s.length >= 20 && /^ \S+ \S+ \S+/.test(s)) {
    spec.rest = s.trim(); // the spec overflowed its column: one space before the description
    spec.overflow = true;
  } else if (/^\s+\S/.test(s) && spec.names.length > 0 && /^\s\S+\s\S+/.test(s) && !GAP.test(s)) {
    return `cannot tell where the option "${spec.names.at(-1)}" ends and its description starts`;
  } else return `cannot read the text after "${spec.names.at(-1)}"`;
  return spec;
}

/**
 * The value an option takes, from its metavar as written: type from names such as `N`, `int`,
 * `BOOLEAN`; choices from `{a,b}`, `[a|b]`, `<a|b>`.
 */
export function valueOf(raw: string, optional: boolean, equals: boolean): OptionValue {
  let metavar = raw.replace(/\.\.\.$/, "");
  if (metavar.startsWith("[") && metavar.endsWith("]")) {
    metavar = metavar.slice(1, -1);
    // click's "[always|never|auto]" is a choice, not an optional value.
    optional = !/^[\w.-]+(\|[\w.-]+)+$/.test(metavar);
  }
  metavar = metavar.replace(/^<(.*)>$/, "$1").replace(/^'(.*)'$/, "$1").replace(
    /(\w)\.\.\.$/,
    "$1",
  );
  if (metavar === "..." || metavar === "") metavar = "VALUE";
  const value: OptionValue = { metavar, type: "string", optional, equals };
  let choices: string[] | undefined;
  if (/^\{[^}]+\}$/.test(metavar)) choices = metavar.slice(1, -1).split(",");
  else if (/\|/.test(metavar) && !/[<>\s]/.test(metavar.replace(/\s*\|\s*/g, "|"))) {
    choices = metavar.split(/\s*\|\s*/);
  }
  if (choices && choices.every((c) => /^[\w.+-]+$/.test(c)) && choices.length > 1) {
    value.enum = choices;
  } else if (INTEGER_METAVARS.test(metavar)) value.type = "integer";
  else if (NUMBER_METAVARS.test(metavar)) value.type = "number";
  else if (BOOLEAN_METAVARS.test(metavar)) value.type = "boolean";
  return value;
}

/** Column where a line's description starts. */
export function descColumn(line: string, desc: string): number {
  const at = line.lastIndexOf(desc);
  return at < 0 ? 8 : at;
}

/**
 * Description lines that continue an entry: lines indented at least `minIndent`; when
 * `settle` is set, the first such line fixes the column the later ones must reach.
 */
export function continuation(
  lines: string[],
  from: number,
  minIndent: number,
  settle = false,
): string[] {
  const out: string[] = [];
  let column = minIndent;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") break;
    const tabbed = line.startsWith("\t");
    const indent = tabbed ? 8 : line.length - line.trimStart().length;
    if (indent < column) break;
    if (settle && out.length === 0) column = indent;
    out.push(line.trim());
  }
  return out;
}

/** A line that ends mid-sentence: the next line continues it even when capitalised. */
const CONTINUES =
  /([,(]|\b(the|a|an|of|to|from|for|and|or|with|in|on|by|as|is|are|that|when|if|into|than|use|using))$/i;

/** Joins description lines and keeps the first sentence or line, at most MAX_DESCRIPTION. */
export function oneLine(parts: string[]): string {
  const kept: string[] = [];
  for (const p of parts) {
    // clap and deno write one sentence a line, often without a final period.
    const last = kept[kept.length - 1];
    if (last !== undefined && /^[A-Z][a-z]/.test(p) && !CONTINUES.test(last)) break;
    kept.push(p);
    const open = (kept.join(" ").match(/\(/g) ?? []).length;
    const closed = (kept.join(" ").match(/\)/g) ?? []).length;
    if (/[.:;]$/.test(p) && open <= closed) break;
  }
  let text = kept.join(" ").replace(/\s+/g, " ").trim().replace(/;$/, "");
  const sentence = /^(.{20,}?[.!?])\s+[A-Z(']/.exec(text);
  if (sentence && text.length > 120) text = sentence[1];
  if (text.length > MAX_DESCRIPTION) text = text.slice(0, MAX_DESCRIPTION - 1).trimEnd() + "…";
  return text;
}

/**
 * Reads every option entry of a help text (lines in the usage block excepted). Entries that
 * cannot be read are added to `skipped`; the first entry of a name wins.
 */
export function readOptionList(
  lines: string[],
  usageLines: Set<number>,
  skipped: Skipped[],
  strict = false,
): HelpOption[] {
  const out: HelpOption[] = [];
  const seen = new Set<string>();
  let descIndent = Infinity;
  for (let i = 0; i < lines.length; i++) {
    if (usageLines.has(i)) continue;
    const line = lines[i];
    const trimmed = line.trimStart();
    const indent = line.length - trimmed.length;
    if (!trimmed.startsWith("-") || line.startsWith("\t") && indent > 0 && descIndent < Infinity) {
      if (trimmed === "") descIndent = Infinity;
      continue;
    }
    if (indent >= descIndent && indent > 8) continue; // a continuation line that starts with "-"
    const spec = parseSpec(trimmed);
    if (spec === null) continue;
    if (typeof spec === "string") {
      if (strict) continue;
      skipped.push({ what: `option line "${oneLine([trimmed]).slice(0, 60)}"`, why: spec });
      continue;
    }
    let descLines = spec.rest ? [spec.rest] : [];
    const column = spec.rest ? descColumn(line, spec.rest) : indent + 1;
    const more = continuation(lines, i + 1, column, !spec.rest);
    descLines = [...descLines, ...more];
    if (descLines.length === 0 && indent === 0) continue; // prose such as "--format=gnu -f-"
    // A manual page's prose often starts a line with an option; an entry there has its text
    // after a gap or on the lines below, and at most three spellings.
    if (strict && (descLines.length === 0 || spec.overflow || spec.names.length > 3)) continue;
    descIndent = spec.rest ? column : indent + 2;
    if (spec.names.some((n) => seen.has(n))) continue;
    for (const n of spec.names) seen.add(n);
    const full = descLines.join(" ").replace(/\s+/g, " ");
    out.push(toOption(spec, descLines, full));
  }
  return out;
}

/** yargs' trailing tags: `[string]`, `[number] [default: 1]`, `[choices: "a", "b"]`, `[required]`. */
const YARGS_TAGS =
  /(\s*\[(string|number|boolean|array|count|required|choices: [^\]]*|default: [^\]]*)\])+\s*$/;

/** What yargs' tags say, when the text has them: `[string]`, `[array]`, `[choices: …]`. */
function yargsTypes(
  full: string,
): { type: OptionValue["type"]; array: boolean; required: boolean; choices?: string[] } | null {
  const tags = YARGS_TAGS.exec(full)?.[0];
  if (!tags || !/\[(string|number|boolean|array|count)\]/.test(tags)) return null;
  const type = /\[number\]/.test(tags)
    ? "number"
    : /\[(boolean|count)\]/.test(tags)
    ? "boolean"
    : "string";
  const out: ReturnType<typeof yargsTypes> = {
    type,
    array: /\[array\]/.test(tags),
    required: /\[required\]/.test(tags),
  };
  const choices = /\[choices: ([^\]]*)\]/.exec(tags);
  if (choices) {
    out.choices = choices[1].split(/,\s*/).map((c) => c.trim().replace(/^"(.*)"$/, "$1"));
  }
  return out;
}

/** Makes an option of a parsed spec and its description lines (`full`: them joined). */
export function toOption(spec: Spec, descLines: string[], full: string): HelpOption {
  const long = spec.names.find((n) => n.startsWith("--")) ??
    spec.names.find((n) => n.length > 2) ?? spec.names[0];
  const option: HelpOption = {
    names: spec.names,
    flag: long,
    repeatable: spec.repeatable,
    description: oneLine(descLines.map((d) => d.replace(/\s*\[possible values:[^\]]*\]?/, ""))),
  };
  let value = spec.value;
  const possible = /\[possible values: ([^\]]+)\]/.exec(full);
  if (value && possible) {
    const choices = possible[1].split(/,\s*/).map((c) => c.trim()).filter((c) => c !== "");
    if (choices.every((c) => /^[\w.+-]+$/.test(c))) value = { ...value, enum: choices };
  }
  if (spec.colonDefault !== undefined) {
    const d = spec.colonDefault;
    if (d === "false" || d === "true") value = undefined;
    else {
      value = valueOf(/^-?\d+$/.test(d) ? "int" : "VALUE", false, true);
      if (d !== "" && d !== "[]") option.default = d;
    }
  }
  const yargs = yargsTypes(full);
  if (yargs && !value && yargs.type !== "boolean") {
    value = { metavar: yargs.type, type: yargs.type, optional: false, equals: false };
    if (yargs.array) option.repeatable = true;
  }
  if (value && yargs?.choices) value = { ...value, enum: yargs.choices };
  if (yargs?.required) option.required = true;
  if (yargs) option.description = option.description.replace(YARGS_TAGS, "").trim();
  if (value) option.value = value;
  const stated = /[[(]default(?:: | = |: ?")([^\])"]+)"?[\])]/i.exec(full) ??
    /\(default (-?\d+(?:\.\d+)?|"[^"]*")\)/.exec(full);
  if (stated && option.default === undefined) option.default = stated[1].trim();
  if (REPEAT_TEXT.test(full) && value) option.repeatable = true;
  // "-b bits: Specifies the number of bits", "levels (a non-negative integer)".
  if (
    option.value?.type === "string" && !option.value.enum &&
    /^[A-Za-z]+$/.test(option.value.metavar) &&
    /\b(number of|non-negative integer|positive integer|an integer)\b/i.test(full.slice(0, 160)) &&
    !/\b(file|path|name|list)\b/i.test(option.value.metavar)
  ) option.value = { ...option.value, type: "integer" };
  return option;
}
