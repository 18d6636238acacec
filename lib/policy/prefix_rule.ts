/**
 * "Always" for a `run` line, widened to a prefix rule (SPEC S8.1): the line's program and
 * the subcommand words before its first option or path, then ` *` (`npm test -- --watch`
 * → `npm test *`). The person can accept the rule for the session and save it to their
 * own config as `{"tool": "run", "command": ["npm test *"], "decision": "allow"}`.
 *
 * @module
 */
import type * as Jsonc from "jsonc-parser";
import type { ParseError } from "jsonc-parser";
import { dirname } from "node:path";
import { lazyRequire } from "../core/lazy_require.ts";
import type { Policy } from "./decide.ts";
import { compileRule } from "./rules.ts";
import { readLine, shellWord } from "./shell.ts";

/** jsonc-parser, loaded when a rule is saved. */
const jsonc = lazyRequire<typeof Jsonc>("jsonc-parser");

/** Subcommand words: plain lowercase words (`test`, `run`, `build:prod`), at most two. */
const SUBCOMMAND = /^[a-z][a-z0-9:_-]*$/;
const MAX_SUBCOMMANDS = 2;

/**
 * The prefix rule for a `run` line: its one simple command's program, the subcommand words
 * that follow it (up to the first option, path or other word), then `*`.
 *
 * @returns the pattern (`git status *`), or undefined when the line is not one plain
 *   command (a list, a pipeline, a wrapper, a variable, a word only bash knows): then only
 *   the exact line can be remembered
 */
export function prefixRule(line: string): string | undefined {
  const read = readLine(line);
  if (read.problems.length > 0 || read.commands.length !== 1) return undefined;
  const [c] = read.commands;
  if (c.program === "" || c.dynamic || c.assigns.length > 0 || c.via.length > 0) return undefined;
  if (c.program === ">" || c.program === "<") return undefined;
  if (!/^[\w@%+=:,./-]+$/.test(c.program)) return undefined;
  // The words in the order written: the message text quotes each word that is not plain.
  const written = c.text.slice(shellWord(c.program).length).trim().split(" ");
  const subcommands: string[] = [];
  for (const w of written) {
    if (subcommands.length >= MAX_SUBCOMMANDS || !SUBCOMMAND.test(w)) break;
    subcommands.push(w);
  }
  return [c.program, ...subcommands, "*"].join(" ");
}

/**
 * The policy with the session's prefix rules added as one allow rule: a call it allows is
 * one those rules cover, judged as a saved rule would be — deny rules still deny, and what
 * the judge cannot read with certainty (a word only bash knows, a program that is not the
 * one on magi's PATH, an option it does not know) is still asked about.
 */
export function withPrefixRules(policy: Policy, patterns: readonly string[]): Policy {
  if (patterns.length === 0) return policy;
  const rule = compileRule(
    { ...prefixRuleConfig(patterns[0]), command: [...patterns], reason: "accepted with always" },
    "always-this-session",
    "this session",
  );
  return { ...policy, rules: [...policy.rules, rule] };
}

/** The rule a prefix is saved as. */
export function prefixRuleConfig(pattern: string) {
  return { tool: "run", command: [pattern], decision: "allow" as const };
}

/**
 * Appends an allow rule for `pattern` to `policy.rules` of a config file, keeping its
 * comments and layout; creates the file (0600, in a 0700 folder) when it is missing.
 *
 * @throws Error `Cannot save the rule to "FILE": …` when the file cannot be read as JSONC,
 *   or `policy.rules` is not a list, or it cannot be written
 */
export async function saveRunRule(file: string, pattern: string): Promise<void> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new Error(`Cannot save the rule to "${file}": ${(error as Error).message}`);
    }
    await Deno.mkdir(dirname(file), { recursive: true, mode: 0o700 });
    text = "{}\n";
  }
  const errors: ParseError[] = [];
  const { parse, modify, applyEdits } = jsonc();
  const config = parse(text, errors, { allowTrailingComma: true }) as
    | Record<string, unknown>
    | undefined;
  if (errors.length > 0 || typeof config !== "object" || config === null) {
    throw new Error(`Cannot save the rule to "${file}": it is not a JSONC object`);
  }
  const policy = config.policy as Record<string, unknown> | undefined;
  if (policy !== undefined && (typeof policy !== "object" || policy === null)) {
    throw new Error(`Cannot save the rule to "${file}": key "policy" is not an object`);
  }
  if (policy?.rules !== undefined && !Array.isArray(policy.rules)) {
    throw new Error(`Cannot save the rule to "${file}": key "policy.rules" is not a list`);
  }
  const format = { insertSpaces: true, tabSize: 2, eol: "\n" };
  const rule = prefixRuleConfig(pattern);
  const edits = policy?.rules === undefined
    ? modify(text, ["policy", "rules"], [rule], { formattingOptions: format })
    : modify(text, ["policy", "rules", -1], rule, {
      formattingOptions: format,
      isArrayInsertion: true,
    });
  const out = applyEdits(text, edits);
  try {
    await Deno.writeTextFile(file, out.endsWith("\n") ? out : out + "\n", { mode: 0o600 });
    await Deno.chmod(file, 0o600);
  } catch (error) {
    throw new Error(`Cannot save the rule to "${file}": ${(error as Error).message}`);
  }
}
