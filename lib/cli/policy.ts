/**
 * `magi policy explain TOOL [JSON] [--json] [--cwd DIR]`: the policy's decision on a call and
 * the rule that made it (SPEC S8.1), without running anything, then what the door decides
 * for a model's call and the sandbox it runs in (a Lua body's `magi.exec` calls are decided
 * when they run). A person's own `magi call` counts an ask as approved.
 *
 * @module
 */
import { verdictLine } from "../policy/decide.ts";
import { POLICY_OPTIONS } from "./options.ts";
import { door } from "../policy/door.ts";
import { effectsOf, NONE } from "../policy/effects.ts";
import { judge } from "../policy/facts.ts";
import { hiddenReason } from "./explain_hidden.ts";
import { argumentsProblem } from "../core/json_schema.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, write, writeJson } from "./common.ts";

/** Runs `magi policy`. */
export async function policyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, POLICY_OPTIONS);
  const [sub, name, json, ...extra] = positionals;
  if (sub !== "explain") {
    throw new UsageError("magi policy takes one subcommand: magi policy explain TOOL [JSON]");
  }
  if (!name) throw new UsageError("magi policy explain needs a tool name");
  if (extra.length > 0) throw new UsageError("magi policy explain takes one JSON argument");
  let callArgs: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      callArgs = JSON.parse(json);
    } catch (error) {
      throw new UsageError(`the arguments are not JSON: ${(error as Error).message}`);
    }
    if (typeof callArgs !== "object" || callArgs === null || Array.isArray(callArgs)) {
      throw new UsageError("the arguments must be a JSON object");
    }
  }
  const rt = await runtimeFor(values, { calls: true });
  // `approval` is the pseudo-tool of the approvals socket's requests.
  const tool = rt.registry.get(name);
  // The same source the gate judges by: "project" for a project's own declarations.
  const source = name === "approval"
    ? "magi"
    : tool && (tool.origin.project ? "project" : tool.origin.source);
  if (!source) throw new UsageError(`unknown tool "${name}"; \`magi tools\` lists the tools`);
  // The gate judges checked arguments only: a call that would fail its schema never reaches it.
  // (`cwd` and `timeout_seconds` every tool takes, unless it declares them itself.)
  const { cwd: _cwd, timeout_seconds: _timeout, ...own } = callArgs;
  const problem = tool && Object.keys(tool.declaration.parameters).length > 0
    ? argumentsProblem(tool.declaration.parameters, tool.ownsCallFields ? callArgs : own)
    : null;
  if (problem) throw new UsageError(`invalid arguments for "${name}": ${problem}`);
  const cwd = values.cwd ?? rt.session.cwd;
  const judged = judge(rt.policy, {
    tool: name,
    source,
    args: callArgs,
    cwd,
    path: [rt.linksDir, rt.env.PATH].filter(Boolean).join(":"),
  });
  // A path the file builtins refuse as hidden is refused whatever the rules say.
  const hidden = hiddenReason(rt.policy, name, source, callArgs, cwd);
  const verdict = hidden ? { decision: "deny" as const, rule: null, reason: hidden } : judged;
  // What the door decides for a model's call of it, and in which sandbox.
  const effects = tool ? effectsOf(tool, own, cwd) : NONE;
  const ruling = door({ tool: name, verdict, effects, caller: "model", settings: rt.door });
  const execs = effects.execsAtRun === true;
  if (values.json) {
    await writeJson({
      ...verdict,
      door: {
        caller: "model",
        decision: ruling.decision,
        sandbox: ruling.sandbox,
        ...(ruling.why ? { why: ruling.why } : {}),
        ...(execs ? { execs: "decided at exec time" } : {}),
      },
    });
    return EXIT.ok;
  }
  const lines = [verdictLine(verdict)];
  const sandbox = ruling.sandbox === "off" ? "unsandboxed" : `in the ${ruling.sandbox} sandbox`;
  const runs = ruling.decision === "allow"
    ? `a model's call: allow; it runs ${sandbox}`
    : ruling.decision === "ask"
    ? `a model's call: ask${ruling.why ? ` (${ruling.why})` : ""}; approved, it runs ${sandbox}`
    : `a model's call: deny${hidden ? ` (${hidden})` : ""}`;
  lines.push(runs);
  if (execs) {
    lines.push(
      "its Lua body's magi.exec calls are decided at exec time, each as a `run` of its words " +
        '(`magi policy explain run \'{"command": "…"}\'`)',
    );
  }
  await write(lines.join("\n") + "\n");
  return EXIT.ok;
}
