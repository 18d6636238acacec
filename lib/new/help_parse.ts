/**
 * Reading a program's `--help` text into a model of its options and positionals, for
 * `magi new` (SPEC S10.3). One parser covers the styles people meet: GNU (`-x, --long=VALUE`),
 * BSD usage synopses, Python argparse and click, Go cobra (pflag) and the flag package, Rust
 * clap, docopt, git's parse-options, Node and npm. What cannot be read with confidence is left
 * out and listed in `skipped`, so the schema made from the model is never wrong, only smaller.
 *
 * @module
 */

/** The value an option takes. */
export interface OptionValue {
  /** The name the help text gives the value, such as `FILE` or `<N>`. */
  metavar: string;
  type: "string" | "integer" | "number" | "boolean";
  /** The option may be given without a value (`--color[=WHEN]`). */
  optional: boolean;
  /** Whether the text wrote the value joined with `=` (`--width=COLS`). */
  equals: boolean;
  enum?: string[];
}

/** One option the help text lists. */
export interface HelpOption {
  /** Every spelling, as written: `["-l", "--long"]`. */
  names: string[];
  /** The spelling argv uses: the first long one, else the first. */
  flag: string;
  /** Absent for a flag that takes no value. */
  value?: OptionValue;
  /** The option may be given more than once (each value its own flag). */
  repeatable: boolean;
  /** One line, at most {@link MAX_DESCRIPTION} characters. */
  description: string;
  /** The default the text states, as written. */
  default?: string;
}

/** One positional argument of the usage line. */
export interface HelpPositional {
  /** The name as written, without brackets: `FILE`, `jq filter`. */
  name: string;
  required: boolean;
  /** Several values may be given (`FILE...`). */
  repeated: boolean;
  description: string;
}

/** Something the parser saw and left out, and why. */
export interface Skipped {
  what: string;
  why: string;
}

/** What a help text says about a program's command line. */
export interface HelpModel {
  /** The style the text looks like, for the report: "gnu", "argparse", "clap", …. */
  style: string;
  /** A one-line description of the program, when the text has one. */
  summary?: string;
  /** The first usage form, whitespace collapsed: `ls [OPTION]... [FILE]...`. */
  usage?: string;
  /** How many usage forms the text gives. */
  forms: number;
  options: HelpOption[];
  /** The first usage form's positionals; null when the usage line could not be read. */
  positionals: HelpPositional[] | null;
  /** Parts of the command line the model leaves to the generic `args` parameter. */
  skipped: Skipped[];
}

/** Colour escapes some programs print even when not on a terminal. */
const ANSI_COLOR = new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g");

/** Longest description kept, in characters. */
export const MAX_DESCRIPTION = 200;

const NAME = /^--?[A-Za-z0-9?][\w.?]*(?:-[\w.?]+)*/;
const GAP = /^(?:\s{2,}|\t)/;
const INTEGER_METAVARS =
  /^(n|num|number|int|integer|count|cols|columns|depth|port|uint\d*|int\d*|jobs|level)$/i;
const NUMBER_METAVARS = /^(float|float\d+|decimal|double|seconds|secs|ratio)$/i;
const BOOLEAN_METAVARS = /^(bool|boolean)$/i;
const LIST_TYPES = /^(strings|stringArray|stringSlice|list|intSlice|stringToString)$/;
const REPEAT_TEXT =
  /\b(can|may) be (repeated|given more than once|specified (multiple|more than once|several)|used (multiple|more than once)|passed multiple)|\b(repeatable)\b|multiple times/i;
const HELP_NAMES = new Set(["--help", "--version", "--usage", "-?"]);

/**
 * Parses a help text.
 *
 * @param text the program's help, as printed
 * @param words the command line the help belongs to, such as `["git", "status"]`: its words
 *   are dropped from the front of the usage line
 * @returns the model; never throws
 */
export function parseHelp(text: string, words: readonly string[]): HelpModel {
  const lines = text.replace(/\r/g, "").replace(ANSI_COLOR, "").split("\n")
    .map((l) => l.replace(/\s+$/, ""));
  const skipped: Skipped[] = [];
  const usage = findUsage(lines);
  const listed = readOptionList(lines, usage.lineNumbers, skipped);
  const forms = usage.forms;
  const first = forms[0];
  const fromUsage = first ? usageOptions(bracketsOf(first, lines, usage.lineNumbers), skipped) : [];
  const options = mergeOptions(listed, fromUsage, listed.length === 0 && forms.length >= 1);
  let positionals: HelpPositional[] | null = null;
  if (first !== undefined) {
    const read = readPositionals(first, words, lines);
    if (typeof read === "string") skipped.push({ what: `usage "${first}"`, why: read });
    else positionals = read;
  } else {
    skipped.push({ what: "positional arguments", why: "the text has no usage line" });
  }
  if (forms.length > 1) {
    skipped.push({
      what: `${forms.length - 1} other usage form${forms.length > 2 ? "s" : ""}`,
      why: "only the first form is typed; the others are reachable through args",
    });
  }
  const helpOptions = options.filter(isHelpOption);
  if (helpOptions.length > 0) {
    skipped.push({
      what: helpOptions.map((o) => o.names.join(", ")).join("; "),
      why: "help and version options are not for the model",
    });
  }
  const model: HelpModel = {
    style: guessStyle(text),
    forms: forms.length,
    options: options.filter((o) => !isHelpOption(o)),
    positionals,
    skipped,
  };
  if (first !== undefined) model.usage = first;
  const summary = findSummary(lines, usage.lineNumbers);
  if (summary) model.summary = summary;
  return model;
}

function isHelpOption(o: HelpOption): boolean {
  if (o.names.some((n) => HELP_NAMES.has(n))) return true;
  return o.names.every((n) => n === "-h") && /help/i.test(o.description);
}

// ---------------------------------------------------------------------------------------------
// Usage lines

interface UsageBlock {
  /** Each form, whitespace collapsed, continuation lines joined. */
  forms: string[];
  /** Line numbers the usage block covers. */
  lineNumbers: Set<number>;
}

function findUsage(lines: string[]): UsageBlock {
  const block: UsageBlock = { forms: [], lineNumbers: new Set() };
  let start = lines.findIndex((l) => /^\s*usage\s*:/i.test(l));
  if (start < 0) {
    // man-page or docopt without "usage:": a SYNOPSIS heading.
    start = lines.findIndex((l) => /^\s*SYNOPSIS\s*$/.test(l));
    if (start < 0) return block;
  }
  block.lineNumbers.add(start);
  let rest = lines[start].replace(/^\s*(usage\s*:|SYNOPSIS)\s*/i, "");
  let i = start + 1;
  if (rest.trim() === "") {
    while (i < lines.length && lines[i].trim() === "") i++;
    if (i >= lines.length) return block;
    rest = lines[i];
    block.lineNumbers.add(i);
    i++;
  }
  const program = rest.trim().split(/\s+/)[0];
  const forms = [rest.trim()];
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") break;
    const trimmed = line.trim();
    if (/^or\s*:/i.test(trimmed)) {
      forms.push(trimmed.replace(/^or\s*:\s*/i, ""));
    } else if (trimmed.split(/\s+/)[0] === program && /^\s/.test(line)) {
      forms.push(trimmed);
    } else if (
      /^\s/.test(line) && /^[[<{(A-Za-z.-]/.test(trimmed) &&
      (!isOptionLine(trimmed) || !/\S(\s{2,}|\t)\S/.test(trimmed))
    ) {
      forms[forms.length - 1] += " " + trimmed;
    } else break;
    block.lineNumbers.add(i);
  }
  block.forms = forms.map((f) => f.replace(/\s+/g, " ").trim()).filter((f) => f !== "");
  return block;
}

function isOptionLine(trimmed: string): boolean {
  return NAME.test(trimmed) && !/^--?\s/.test(trimmed);
}

/** A usage form split into top-level items: bracket groups and words. */
function items(form: string): string[] | string {
  const out: string[] = [];
  let i = 0;
  const open: Record<string, string> = { "[": "]", "<": ">", "{": "}", "(": ")" };
  while (i < form.length) {
    if (form[i] === " ") {
      i++;
      continue;
    }
    let j = i;
    const stack: string[] = [];
    while (j < form.length && (stack.length > 0 || form[j] !== " ")) {
      const c = form[j];
      if (c in open) stack.push(open[c]);
      else if (stack.length > 0 && c === stack[stack.length - 1]) stack.pop();
      else if ("]>})".includes(c)) return `unbalanced "${c}"`;
      j++;
    }
    if (stack.length > 0) return `unbalanced brackets`;
    out.push(form.slice(i, j));
    i = j;
  }
  return out;
}

const OPTION_PLACEHOLDER =
  /^\[?<?(options?|flags?|opts?|global[ _-]options|option\.\.\.|options\.\.\.)>?\]?(\.\.\.)?$/i;

function readPositionals(
  form: string,
  words: readonly string[],
  lines: string[],
): HelpPositional[] | string {
  const cleaned = form.replace(/\[\s*--\s*\]/g, "").replace(/\s--(\s|$)/g, " ")
    .replace(/\[\s+/g, "[").replace(/\s+\]/g, "]").replace(/\s+\.\.\./g, "...");
  const parts = items(cleaned);
  if (typeof parts === "string") return parts;
  parts.shift(); // the program's own name
  const sub = words.slice(1).filter((w) => !w.startsWith("-"));
  while (parts.length > 0 && sub.length > 0 && parts[0] === sub[0]) {
    parts.shift();
    sub.shift();
  }
  const out: HelpPositional[] = [];
  for (const raw of parts) {
    if (OPTION_PLACEHOLDER.test(raw)) continue;
    if (/^\[-/.test(raw)) continue; // an optional option group: read by usageOptions
    if (/^-/.test(raw)) return `it needs the option "${raw}"; such forms are not typed`;
    let text = raw;
    let required = true;
    let repeated = false;
    if (text.endsWith("...")) {
      repeated = true;
      text = text.slice(0, -3);
    }
    if (text.startsWith("[") && text.endsWith("]")) {
      required = false;
      text = text.slice(1, -1).trim();
      if (text.endsWith("...")) {
        repeated = true;
        text = text.slice(0, -3).trim();
      }
      if (OPTION_PLACEHOLDER.test(text)) continue;
    }
    if (text.startsWith("<") && text.endsWith(">")) text = text.slice(1, -1).trim();
    if (text.endsWith("...")) {
      repeated = true;
      text = text.slice(0, -3).trim();
    }
    if (text === "" || /[[\]<>{}()|]/.test(text) || /^-/.test(text)) {
      return `the argument "${raw}" is a choice or nested group`;
    }
    if (/^[a-z][a-z-]*$/.test(text) && required && !raw.startsWith("<") && /^[a-z]/.test(raw)) {
      // A bare lowercase word is a literal subcommand in docopt and BSD synopses, not a value.
      if (
        !/^(file|files|path|paths|dir|directory|name|url|pattern|string|args|arguments)$/.test(text)
      ) {
        return `the word "${raw}" may be a subcommand; such forms are not typed`;
      }
    }
    if (/^(args?|arguments)$/i.test(text)) repeated = true;
    out.push({ name: text, required, repeated, description: positionalDescription(text, lines) });
  }
  return out;
}

/** A positional's description from an "Arguments:" / "positional arguments:" section. */
function positionalDescription(name: string, lines: string[]): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`^\\s+[<\\[]?${escaped}[>\\]]?(\\.\\.\\.)?(\\s{2,}|\\t)(.+)$`);
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i]);
    if (m) return oneLine([m[3], ...continuation(lines, i + 1, descColumn(lines[i], m[3]))]);
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Option lists

interface Spec {
  names: string[];
  value?: OptionValue;
  repeatable: boolean;
  /** The description text on the same line, if any. */
  rest: string;
  /** A kubectl-style `--name=DEFAULT:` line. */
  colonDefault?: string;
  negation?: string;
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
function parseSpec(line: string): Spec | string | null {
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
    if (group !== "" && !/\s/.test(group)) {
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
      if (raw.endsWith("...")) spec.repeatable = true;
      s = s.slice(vm[0].length);
      sawBracketValue = true;
    } else if ((vm = /^<([^>]+)>/.exec(s))) {
      spec.value = valueOf(vm[1], false, false);
      s = s.slice(vm[0].length);
    } else if (
      (vm = /^ ([A-Za-z][\w.:-]*)(\.\.\.)?(?=$|\s{2,}|\t|,\s*-|\s+\|\s*-|\s*\/\s*-)/.exec(s))
    ) {
      // An uppercase metavar (FILE), a cobra type (string) or a click type (TEXT).
      spec.value = valueOf(vm[1], false, false);
      if (vm[2] || LIST_TYPES.test(vm[1])) spec.repeatable = true;
      s = s.slice(vm[0].length);
    } else if (/^ [A-Za-z<][\w<>:-]* [A-Za-z<][\w<>:-]*(\s{2,}|\t|$)/.test(s)) {
      return `"${name}" takes more than one value`;
    }
    const sep = /^(\s*,\s*|\s*\|\s*|\s+\/\s+| (?=-))/.exec(s);
    if (sep && NAME.test(s.slice(sep[0].length))) {
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
  } else if (/^\s+\S/.test(s) && spec.names.length > 0 && /^\s\S+\s\S+/.test(s) && !GAP.test(s)) {
    return `cannot tell where the option "${spec.names.at(-1)}" ends and its description starts`;
  } else return `cannot read the text after "${spec.names.at(-1)}"`;
  return spec;
}

function valueOf(raw: string, optional: boolean, equals: boolean): OptionValue {
  let metavar = raw.replace(/\.\.\.$/, "");
  if (metavar.startsWith("[") && metavar.endsWith("]")) {
    metavar = metavar.slice(1, -1);
    // click's "[always|never|auto]" is a choice, not an optional value.
    optional = !/^[\w.-]+(\|[\w.-]+)+$/.test(metavar);
  }
  metavar = metavar.replace(/^<(.*)>$/, "$1").replace(/^'(.*)'$/, "$1");
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
function descColumn(line: string, desc: string): number {
  const at = line.lastIndexOf(desc);
  return at < 0 ? 8 : at;
}

/**
 * Description lines that continue an entry: lines indented at least `minIndent`; when
 * `settle` is set, the first such line fixes the column the later ones must reach.
 */
function continuation(lines: string[], from: number, minIndent: number, settle = false): string[] {
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
function oneLine(parts: string[]): string {
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

function readOptionList(
  lines: string[],
  usageLines: Set<number>,
  skipped: Skipped[],
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
      skipped.push({ what: `option line "${oneLine([trimmed]).slice(0, 60)}"`, why: spec });
      continue;
    }
    let descLines = spec.rest ? [spec.rest] : [];
    const column = spec.rest ? descColumn(line, spec.rest) : indent + 1;
    const more = continuation(lines, i + 1, column, !spec.rest);
    descLines = [...descLines, ...more];
    if (descLines.length === 0 && indent === 0) continue; // prose such as "--format=gnu -f-"
    descIndent = spec.rest ? column : indent + 2;
    if (spec.names.some((n) => seen.has(n))) continue;
    for (const n of spec.names) seen.add(n);
    const full = descLines.join(" ").replace(/\s+/g, " ");
    out.push(toOption(spec, descLines, full));
  }
  return out;
}

function toOption(spec: Spec, descLines: string[], full: string): HelpOption {
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
  if (value?.type === "boolean" && !value.optional) {
    // click's "--export BOOLEAN": a value flag whose value is true or false.
  }
  if (value) option.value = value;
  const stated = /[[(]default(?:: | = |: ?")([^\])"]+)"?[\])]/i.exec(full) ??
    /\(default (-?\d+(?:\.\d+)?|"[^"]*")\)/.exec(full);
  if (stated && option.default === undefined) option.default = stated[1].trim();
  if (REPEAT_TEXT.test(full) && value) option.repeatable = true;
  return option;
}

// ---------------------------------------------------------------------------------------------
// Options written as bracket groups in usage lines (BSD synopses, npm, argparse)

function bracketsOf(firstForm: string, lines: string[], usageLines: Set<number>): string[] {
  const out: string[] = [firstForm];
  // npm's "Options:" block is a run of bracket groups.
  for (let i = 0; i < lines.length; i++) {
    if (!usageLines.has(i) && /^\s*\[-/.test(lines[i])) out.push(lines[i]);
  }
  return out;
}

function usageOptions(texts: string[], skipped: Skipped[]): HelpOption[] {
  const out: HelpOption[] = [];
  const parts = items(texts.join(" ").replace(/\s+/g, " "));
  if (typeof parts === "string") return out;
  for (const part of parts) {
    if (!/^\[-/.test(part) || !part.endsWith("]") || /^\[--\]$/.test(part)) continue;
    let inner = part.slice(1, -1).trim();
    let repeatable = false;
    // npm: "--omit <x> [--omit <x> ...]"
    const nested = /^(.*?)\s*\[(.*)\]$/.exec(inner);
    if (nested && nested[2].replace(/\s*\.\.\.$/, "").trim() === nested[1].trim()) {
      inner = nested[1].trim();
      repeatable = true;
    }
    const choice = /^(-\w)\s+([\w-]+(?:\s*\|\s*[\w-]+)+)$/.exec(inner);
    if (choice) {
      out.push({
        names: [choice[1]],
        flag: choice[1],
        value: valueOf(choice[2].replace(/\s+/g, ""), false, false),
        repeatable,
        description: "",
      });
      continue;
    }
    if (/^-[A-Za-z0-9]{2,}$/.test(inner)) {
      // BSD "[-lv]": several one-letter flags.
      for (const c of inner.slice(1)) {
        out.push({ names: [`-${c}`], flag: `-${c}`, repeatable: false, description: "" });
      }
      continue;
    }
    const spec = parseSpec(inner.replace(/ (?=[a-z][\w-]*$)/, " "));
    if (spec === null || typeof spec === "string" || spec.negation) {
      skipped.push({
        what: `usage option "${part}"`,
        why: typeof spec === "string" ? spec : "unclear",
      });
      continue;
    }
    if (spec.rest !== "") {
      // "[-a rounds]": BSD value names are lowercase words.
      const m = /^(-\S+) ([\w-]+)$/.exec(inner);
      if (!m) {
        skipped.push({ what: `usage option "${part}"`, why: "cannot read it" });
        continue;
      }
      out.push({
        names: [m[1]],
        flag: m[1],
        value: valueOf(m[2], false, false),
        repeatable,
        description: "",
      });
      continue;
    }
    const option = toOption(spec, [], "");
    option.repeatable ||= repeatable;
    out.push(option);
  }
  return out;
}

/** Adds what usage groups say to the listed options; without a list, the groups are the list. */
function mergeOptions(
  listed: HelpOption[],
  fromUsage: HelpOption[],
  useAll: boolean,
): HelpOption[] {
  const byName = new Map<string, HelpOption>();
  for (const o of listed) for (const n of o.names) byName.set(n, o);
  const out = [...listed];
  for (const u of fromUsage) {
    const match = u.names.map((n) => byName.get(n)).find((o) => o !== undefined);
    if (match) {
      if (!match.value && u.value) match.value = u.value;
      if (match.value && u.value?.enum && !match.value.enum) match.value.enum = u.value.enum;
      if (u.repeatable && match.value) match.repeatable = true;
      for (const n of u.names) {
        if (!match.names.includes(n)) match.names.push(n);
      }
    } else if (useAll) {
      u.description ||= `The ${u.flag} option${u.value ? ` (value: ${u.value.metavar})` : ""}`;
      out.push(u);
      for (const n of u.names) byName.set(n, u);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Summary and style

function findSummary(lines: string[], usageLines: Set<number>): string | undefined {
  const limit = Math.min(lines.length, 40);
  for (let i = 0; i < limit; i++) {
    if (usageLines.has(i)) continue;
    const t = lines[i].trim();
    if (t === "") continue;
    if (/:$/.test(t) && t.split(/\s+/).length <= 4) break; // a heading such as "Options:"
    if (/^(unknown|invalid|illegal|unrecognized) (option|argument)|^copyright\b/i.test(t)) continue;
    // A short line ending in ":" introduces a list ("Options (and … variables):").
    if (/:$/.test(t) && t.split(/\s+/).length < 6) continue;
    if (
      /^(or\s*:|usage\s*:|-|\[|\$|#|Examples?\b|See\b|Use "|Run ")/i.test(t) || /^[A-Z ]+$/.test(t)
    ) {
      if (/^-|^\[/.test(t)) break;
      continue;
    }
    if (/^Usage/i.test(t)) continue;
    const para = [t];
    for (let j = i + 1; j < limit && lines[j].trim() !== "" && !usageLines.has(j); j++) {
      if (/^\s*-/.test(lines[j]) || /:$/.test(lines[j].trim())) break;
      para.push(lines[j].trim());
    }
    const text = oneLine(para).replace(/\.$/, "");
    return text.length >= 8 ? text : undefined;
  }
  return undefined;
}

function guessStyle(text: string): string {
  if (/^\S+\(\d\w*\)\s.*\(\d\w*\)$/m.test(text) || /^NAME\n[\s\S]*^SYNOPSIS$/m.test(text)) {
    return "man";
  }
  if (/Show this message and exit\./.test(text)) return "click";
  if (/\[possible values:|^Usage: \S+.*\[OPTIONS\]/m.test(text) && /^Options:$/m.test(text)) {
    return "clap";
  }
  if (/^positional arguments:|^options:$|^optional arguments:/m.test(text)) return "argparse";
  if (/Show this message and exit\./.test(text)) return "click";
  if (
    /^Flags:$|^Aliases:$/m.test(text) || /^\s+-\w, --[\w-]+ (string|int|list|uint\d*)\s/m.test(text)
  ) {
    return "cobra";
  }
  if (/^\s+-\w+ (string|int|value|duration)\n\s+\t/m.test(text)) return "go-flag";
  if (/^usage: git /m.test(text)) return "git";
  if (/^Usage: node /m.test(text)) return "node";
  if (/^\s+(-\w, )?--[\w-]+=.*:$/m.test(text)) return "cobra";
  if (/^Usage:\n\s*npm /m.test(text)) return "npm";
  if (/^Usage: node /m.test(text)) return "node";
  if (/^\s+-\w, --[\w-]+(=[A-Z]+)?\s{2,}/m.test(text)) return "gnu";
  if (/^usage: /m.test(text) && !/^\s+--\w/m.test(text)) return "bsd";
  if (/^Usage:$/m.test(text) && /\[default: /.test(text)) return "docopt";
  return "unknown";
}
