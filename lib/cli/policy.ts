/**
 * `magi policy explain TOOL [JSON] [--json] [--cwd DIR]`: the policy's decision on a call and
 * the rule that made it (SPEC S8.1), without running anything. `ask` is what a model's call
 * meets; a person's own `magi call` counts it as approved.
 *
 * @module
 */
import { decide, verdictLine } from "../policy/decide.ts";
import { argumentsProblem } from "../registry/schema.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, write, writeJson } from "./common.ts";

/** Runs `magi policy`. */
export async function policyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    json: { type: "boolean" },
    cwd: { type: "string" },
  });
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
  const rt = await runtimeFor(values);
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
  const verdict = decide(rt.policy, {
    tool: name,
    source,
    args: callArgs,
    cwd,
    path: [rt.linksDir, rt.env.PATH].filter(Boolean).join(":"),
  });
  if (values.json) await writeJson(verdict);
  else await write(verdictLine(verdict) + "\n");
  return EXIT.ok;
}
