/**
 * What `magi chat` does with "always" for a `run` line: offers the prefix rule derived from
 * the line (`npm test *`, see `policy/prefix_rule.ts`), accepts it for the session when
 * the person says yes, then offers to save it to the user's config file. Later `run` lines
 * that the policy asks about and that the session's prefix rules cover are approved without
 * asking again (a deny rule still denies: the approver is never asked about a denial).
 *
 * @module
 */
import type { Policy } from "../policy/decide.ts";
import { judge } from "../policy/facts.ts";
import { prefixRule, saveRunRule, withPrefixRules } from "../policy/prefix_rule.ts";

/** What the handler needs from the chat. */
export interface AlwaysRun {
  /** Shows a question and reads the answer; undefined at the end of input. */
  ask(text: string, prompt: string): Promise<string | undefined>;
  /** Shows one line to the person. */
  note(text: string): void;
  /** The user's config file (`$XDG_CONFIG_HOME/magi/config.jsonc`), if known. */
  configFile?: string;
  /** The prefix rules accepted in this session. */
  prefixes: string[];
  /** The runtime's policy, and the folder and PATH calls run with. */
  policy: Policy;
  cwd(): string;
  path?: string;
}

function yes(answer: string | undefined): boolean {
  return answer !== undefined && /^(y|yes)$/i.test(answer.trim());
}

/** The `run` line of an approval request, if it is one. */
function runLine(tool: string, args: Record<string, unknown> | undefined): string | undefined {
  return tool === "run" && typeof args?.command === "string" ? args.command : undefined;
}

/**
 * Whether the session's prefix rules cover a `run` call the policy asks about: with them
 * added as an allow rule, the policy allows it (so deny rules and the judge's own reasons to
 * ask still hold).
 */
export function coveredBySession(
  ctx: AlwaysRun,
  tool: string,
  args: Record<string, unknown> | undefined,
): boolean {
  if (runLine(tool, args) === undefined || ctx.prefixes.length === 0) return false;
  const verdict = judge(withPrefixRules(ctx.policy, ctx.prefixes), {
    tool,
    source: "builtin",
    args: args!,
    cwd: ctx.cwd(),
    path: ctx.path,
  });
  return verdict.decision === "allow";
}

/**
 * After "always" for a call: for a `run` line, offers its prefix rule for the session and
 * then saving it. Other tools, and lines with no prefix rule, keep the exact call only.
 *
 * @returns the prefix rule accepted, if any
 */
export async function offerPrefixRule(
  ctx: AlwaysRun,
  tool: string,
  args: Record<string, unknown> | undefined,
): Promise<string | undefined> {
  const line = runLine(tool, args);
  if (line === undefined) return undefined;
  const pattern = prefixRule(line);
  if (pattern === undefined) return undefined;
  const accepted = await ctx.ask(
    `? allow every \`${pattern}\` for the rest of this session? [y]es / [n]o (only this exact line)`,
    "always> ",
  );
  if (!yes(accepted)) return undefined;
  if (!ctx.prefixes.includes(pattern)) ctx.prefixes.push(pattern);
  if (ctx.configFile === undefined) return pattern;
  const rule = JSON.stringify({ tool: "run", command: [pattern], decision: "allow" });
  const save = await ctx.ask(`? save ${rule} to ${ctx.configFile}? [y]es / [n]o`, "save> ");
  if (!yes(save)) return pattern;
  try {
    await saveRunRule(ctx.configFile, pattern);
    ctx.note(`saved: ${rule} in ${ctx.configFile} (policy.rules)`);
  } catch (error) {
    ctx.note(`magi: ${(error as Error).message}`);
  }
  return pattern;
}
