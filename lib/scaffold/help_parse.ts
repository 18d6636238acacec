/**
 * Reading a program's `--help` text into a model of its options and positionals, for
 * `magi new` (SPEC S10.3). One parser covers the styles people meet: GNU (`-x, --long=VALUE`),
 * BSD usage synopses, Python argparse and click, Go cobra (pflag) and the flag package, Rust
 * clap, docopt, git's parse-options, Node and npm. What cannot be read with confidence is left
 * out and listed in `skipped`, so the schema made from the model is never wrong, only smaller.
 *
 * @module
 */
import type { HelpModel, HelpOption, HelpPositional, Skipped } from "./help_model.ts";
import { MAX_DESCRIPTION, oneLine, readOptionList } from "./option_list.ts";
import { bracketsOf, findUsage, mergeOptions, readPositionals, usageOptions } from "./usage.ts";

export { MAX_DESCRIPTION };
export type { HelpModel, HelpOption, HelpPositional, OptionValue, Skipped } from "./help_model.ts";

/** Colour escapes some programs print even when not on a terminal. */
const ANSI_COLOR = new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g");

const HELP_NAMES = new Set(["--help", "--version", "--usage", "-?"]);

/**
 * Parses a help text.
 *
 * @param text the program's help, as printed
 * @param words the command line the help belongs to, such as `["git", "status"]`: its words
 *   are dropped from the front of the usage line
 * @param opts `strict` for a manual page: option entries need a description after a gap or
 *   on the lines below, and unreadable lines are prose (not reported as skipped)
 * @returns the model; never throws
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { parseHelp } from "./help_parse.ts";
 *
 * const help = "Usage: greet [OPTIONS] NAME\n\n  -n, --times=N  how many times\n";
 * const model = parseHelp(help, ["greet"]);
 * assert.equal(model.options[0].flag, "--times");
 * assert.equal(model.options[0].value?.type, "integer");
 * assert.deepEqual(model.positionals?.map((p) => p.name), ["NAME"]);
 * ```
 */
export function parseHelp(
  text: string,
  words: readonly string[],
  opts: { strict?: boolean } = {},
): HelpModel {
  const lines = text.replace(/\r/g, "").replace(ANSI_COLOR, "").split("\n")
    .map((l) => l.replace(/\s+$/, ""));
  const skipped: Skipped[] = [];
  const usage = findUsage(lines);
  const listed = readOptionList(lines, usage.lineNumbers, skipped, opts.strict);
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
  for (const s of skipped) {
    if (s.names?.every((n) => options.some((o) => o.names.includes(n)))) {
      s.why = "each is typed from the option list, but they exclude each other: give one";
    }
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
  // Old cobra (kubectl): the flag and its default alone on a line, `--client=false:`.
  if (/^\s+(-\w, )?--[\w-]+=\S*:$/m.test(text)) return "cobra";
  if (/^Usage:\n\s*npm /m.test(text)) return "npm";
  if (/^Usage: node /m.test(text)) return "node";
  if (/^\s+-\w, --[\w-]+(=[A-Z]+)?\s{2,}/m.test(text)) return "gnu";
  if (/^usage: /m.test(text) && !/^\s+--\w/m.test(text)) return "bsd";
  if (/^Usage:$/m.test(text) && /\[default: /.test(text)) return "docopt";
  return "unknown";
}
