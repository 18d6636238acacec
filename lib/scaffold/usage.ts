/**
 * Reading usage lines for `magi new`: the usage forms, the first form's positionals, and
 * options written as bracket groups (BSD synopses, npm, argparse).
 *
 * @module
 */
import type { HelpOption, HelpPositional, Skipped } from "./help_model.ts";
import {
  continuation,
  descColumn,
  isOptionLine,
  oneLine,
  parseSpec,
  toOption,
  valueOf,
} from "./option_list.ts";

/** The usage lines of a help text. */
export interface UsageBlock {
  /** Each form, whitespace collapsed, continuation lines joined. */
  forms: string[];
  /** Line numbers the usage block covers. */
  lineNumbers: Set<number>;
}

/** Finds the usage block (`usage:` or a SYNOPSIS heading) and splits it into forms. */
export function findUsage(lines: string[]): UsageBlock {
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
      (!isOptionLine(trimmed) || !/\S(\s{2,}|\t)\S/.test(trimmed)) &&
      !(/[.!]$/.test(trimmed) && !/[[<]/.test(trimmed)) // prose, not more of the usage
    ) {
      forms[forms.length - 1] += " " + trimmed;
    } else break;
    block.lineNumbers.add(i);
  }
  block.forms = forms.map((f) => f.replace(/\s+/g, " ").trim()).filter((f) => f !== "");
  return block;
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

/**
 * The positionals of one usage form, after the program name and the subcommand `words`.
 *
 * @returns the positionals, or why the form cannot be typed (choices, nested groups, required
 *   options, literal words)
 */
export function readPositionals(
  form: string,
  words: readonly string[],
  lines: string[],
): HelpPositional[] | string {
  const cleaned = form.replace(/\[\s*--\s*\]/g, "").replace(/\s--(\s|$)/g, " ")
    .replace(/\[\s+/g, "[").replace(/\s+\]/g, "]").replace(/\s+\.\.\./g, "...");
  const whole = items(cleaned);
  // A synopsis the reader cannot take whole (git's has an unbalanced ")") still ends in its
  // positionals: `[--] [<pathspec>...]`.
  const parts = typeof whole === "string" ? trailingItems(cleaned) : whole;
  if (parts === undefined) return whole as string;
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
    if (/^\[\(-|^\[[^\]]*\s-/.test(raw)) continue; // `[(-c | -C) <commit>]`: options too
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
    // sed's `{script-only-if-no-other-script}`: one required value.
    if (/^\{[\w -]+\}$/.test(text)) text = text.slice(1, -1).trim();
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

/**
 * The words at the end of a form that read as positionals (`[--] [<pathspec>...]`), after a
 * stand-in for the program's name; undefined when there are none.
 */
function trailingItems(form: string): string[] | undefined {
  const words = form.split(" ");
  const out: string[] = [];
  for (let i = words.length - 1; i > 0; i--) {
    const w = words[i];
    if (!/^\[?<?[A-Za-z][\w.-]*>?(\.\.\.)?\]?(\.\.\.)?$/.test(w) || /^\[?-/.test(w)) break;
    if ((w.match(/\[/g) ?? []).length !== (w.match(/\]/g) ?? []).length) break;
    out.unshift(w);
  }
  return out.length > 0 ? [words[0], ...out] : undefined;
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

/** The texts whose bracket groups are options: the first form, and npm's `[-a|--all]` lines. */
export function bracketsOf(firstForm: string, lines: string[], usageLines: Set<number>): string[] {
  const out: string[] = [firstForm];
  // npm's "Options:" block is a run of bracket groups.
  for (let i = 0; i < lines.length; i++) {
    if (!usageLines.has(i) && /^\s*\[-/.test(lines[i])) out.push(lines[i]);
  }
  return out;
}

/** Options written as bracket groups: `[-a rounds]`, `[--depth <depth>]`, `[-lv]`, `[-a|--all]`. */
export function usageOptions(texts: string[], skipped: Skipped[]): HelpOption[] {
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
    const alternatives = inner.split(/\s*\|\s*/);
    if (alternatives.length > 1 && alternatives.every((a) => /^-/.test(a))) {
      // "[-a | -b]", "[--moored | --drifting]": one or the other, not two spellings of one
      // ("[-a|--all]" pairs a short and a long name, and is one option).
      const long = alternatives.filter((a) => a.startsWith("--")).length;
      if (long !== 1 || alternatives.length !== 2) {
        skipped.push({
          what: `usage option "${part}"`,
          why: "the options exclude each other",
          names: alternatives.map((a) => a.split(" ")[0]),
        });
        continue;
      }
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
export function mergeOptions(
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
