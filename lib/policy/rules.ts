/**
 * Policy rules (SPEC S8.1): what a rule looks like in config, and whether one rule matches
 * one call. A rule names tools with a glob (picomatch), may narrow them by source, by the
 * call's fields, by the commands of a `run` line and by where its paths lead, and says
 * `allow`, `ask` or `deny`. Combining rules (the strictest wins) is `decide.ts`'s job.
 *
 * @module
 */
import type Picomatch from "picomatch";
import { lazyRequire } from "../core/lazy_require.ts";

/** picomatch, loaded at the first glob compiled (`magi tools` compiles none). */
const picomatch = lazyRequire<typeof Picomatch>("picomatch");
import type { SimpleCommand } from "./shell.ts";
import { normaliseArgs } from "./shell.ts";

/** What a rule decides; `deny` is stricter than `ask`, which is stricter than `allow`. */
export type Decision = "allow" | "ask" | "deny";

/** How strict each decision is. */
export const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** Where a call's paths lead. */
export type Where = "inside_roots" | "outside_roots";

/** A rule as config writes it (key `policy.rules`). */
export interface RuleConfig {
  /** A name for messages; defaults to `rule N`. */
  id?: string;
  /** A glob over tool names (picomatch: `*`, `{a,b}`, `!(x)`). */
  tool: string;
  /** Only tools from these sources: "builtin", "tools_dir", "shipped", "lua", "mcp". */
  source?: string | string[];
  /** For `run`: patterns matched against each simple command of the line (see README). */
  command?: string | string[];
  /** Field name → wildcard pattern (`*` any characters) matched against the field's text. */
  fields?: Record<string, string>;
  /** Only calls whose paths all lie inside the roots, or some path outside them. */
  where?: Where;
  decision: Decision;
  /** Why, shown with the decision. */
  reason?: string;
  /** Calls the rule must match and must not match, checked when the config loads. */
  examples?: { match?: unknown[]; no_match?: unknown[] };
}

/** A checked rule, ready to match. */
export interface Rule extends RuleConfig {
  id: string;
  /** Where it came from: "default" or the config file. */
  origin: string;
  matchTool(name: string): boolean;
  commands?: CommandPattern[];
}

/** What a rule is matched against: one call, or one simple command of a `run` line. */
export interface Subject {
  tool: string;
  source: string;
  args: Record<string, unknown>;
  /** For `run`: the one simple command this subject stands for. */
  command?: SimpleCommand;
  /** Whether the subject's paths lie inside the roots; undefined when it has none. */
  inside?: boolean;
}

export { RULE_SCHEMA, RULE_SOURCES } from "../config/rule_schema.ts";

/** `*` matches any characters (spaces and `/` included), `?` one; the rest is literal. */
export function wildcard(pattern: string): RegExp {
  const body = pattern.split("").map((c) =>
    c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${body}$`, "s");
}

/**
 * A pattern over one simple command, such as `git status *` or `rm -r *`. The first word
 * matches the program (its base name, unless the pattern word holds a `/`); words starting
 * with `-` are flags that must each be present somewhere (order does not matter, combined
 * short flags are split); the other words match the command's other words in order; a last
 * word `*` allows any further words and flags. Without it, the command may have no other
 * words and no flags the pattern does not name.
 */
export interface CommandPattern {
  source: string;
  program: RegExp;
  programHasSlash: boolean;
  flags: RegExp[];
  words: RegExp[];
  open: boolean;
}

/** Compiles a command pattern; throws a `SyntaxError` for an empty one. */
export function commandPattern(source: string): CommandPattern {
  const parts = source.trim().split(/\s+/).filter((w) => w !== "");
  if (parts.length === 0) throw new SyntaxError("an empty command pattern");
  const [program, ...rest] = parts;
  const open = rest.length > 0 && rest[rest.length - 1] === "*";
  const body = open ? rest.slice(0, -1) : rest;
  const literal = body.filter((w) => !/[*?]/.test(w));
  const split = !["find"].includes(program);
  const { flags: litFlags, words: litWords } = normaliseArgs(literal, split);
  void litWords;
  const flags: RegExp[] = [];
  const words: RegExp[] = [];
  for (const w of body) {
    if (w.startsWith("-") && w !== "-" && w !== "--") {
      if (/[*?]/.test(w)) flags.push(wildcard(w));
    } else if (w !== "--") words.push(wildcard(w));
  }
  for (const f of litFlags) flags.push(wildcard(f));
  return {
    source,
    program: wildcard(program),
    programHasSlash: program.includes("/"),
    flags,
    words,
    open,
  };
}

/** Whether a simple command matches a pattern. */
export function matchCommand(p: CommandPattern, c: SimpleCommand): boolean {
  if (c.program === "") return false;
  const program = p.programHasSlash ? c.program : c.program.slice(c.program.lastIndexOf("/") + 1);
  if (!p.program.test(program)) return false;
  if (!p.flags.every((f) => c.flags.some((x) => f.test(x)))) return false;
  if (c.words.length < p.words.length) return false;
  if (!p.words.every((w, i) => w.test(c.words[i]))) return false;
  if (p.open) return true;
  return c.words.length === p.words.length &&
    c.flags.every((x) => p.flags.some((f) => f.test(x)));
}

/**
 * Checks a rule from config and compiles its patterns.
 *
 * @param opts.lazy compile the tool glob at its first use (for the default rules, known good:
 *   a start that decides nothing then never loads picomatch)
 * @throws SyntaxError naming what is wrong (the caller adds the file and the rule)
 */
export function compileRule(
  config: RuleConfig,
  id: string,
  origin: string,
  opts: { lazy?: boolean } = {},
): Rule {
  const glob = () => {
    try {
      return picomatch()(config.tool, { dot: true });
    } catch (error) {
      throw new SyntaxError(`tool glob "${config.tool}": ${(error as Error).message}`);
    }
  };
  let isMatch = opts.lazy ? undefined : glob();
  const commands = config.command === undefined
    ? undefined
    : (Array.isArray(config.command) ? config.command : [config.command]).map(commandPattern);
  return {
    ...config,
    id: config.id ?? id,
    origin,
    matchTool: (n) => (isMatch ??= glob())(n),
    commands,
  };
}

function fieldText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Whether a rule matches a subject. A rule with `command` patterns matches only subjects
 * that stand for one simple command; a rule with `where` only subjects that have paths.
 */
export function ruleMatches(rule: Rule, s: Subject): boolean {
  if (!rule.matchTool(s.tool)) return false;
  if (rule.source !== undefined) {
    const sources = Array.isArray(rule.source) ? rule.source : [rule.source];
    if (!sources.includes(s.source)) return false;
  }
  if (rule.fields) {
    for (const [field, pattern] of Object.entries(rule.fields)) {
      const text = fieldText(s.args[field]);
      if (text === undefined || !wildcard(pattern).test(text)) return false;
    }
  }
  if (rule.commands) {
    if (!s.command || !rule.commands.some((p) => matchCommand(p, s.command!))) return false;
  }
  if (rule.where !== undefined) {
    if (s.inside === undefined) return false;
    if (s.inside !== (rule.where === "inside_roots")) return false;
  }
  return true;
}
