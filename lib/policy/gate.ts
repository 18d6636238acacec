/**
 * The gate at the pipeline's entry (SPEC S8.1): `runTool` wraps the tool it is about to
 * invoke with {@link guarded}, so every invocation — the first, and each one resumed with
 * a question's answer (S3.6) — is decided with the arguments it actually carries. `ask` is
 * approved for a person's own call (`magi call`), put to the person when a model made the
 * call and an approver is at hand, and a denial otherwise. A denial is an error result that
 * names the rule.
 *
 * @module
 */
import type { Invocation, Outcome, Tool } from "../registry/types.ts";
import { join } from "node:path";
import { lendApprover } from "./approvals.ts";
import { isDenoScript, serveBroker } from "./broker.ts";
import { sandboxFor, sandboxSockets } from "./sandbox.ts";
import { decide, type Policy, type Verdict, verdictLine } from "./decide.ts";

/** Who makes a call: a person by hand (`magi call`), or a model (the agent, MCP clients). */
export type Caller = "person" | "model";

/** A person's answer to a policy question; undefined when no person can answer. */
export type ApprovalAnswer = "yes" | "no" | "always" | undefined;

/** Asks the person whether a call may run. */
export type Approver = (request: { tool: string; verdict: Verdict }) => Promise<ApprovalAnswer>;

/** What the gate needs from the runtime and the call. */
export interface GateContext {
  policy: Policy;
  caller: Caller;
  approve?: Approver;
  /** Calls approved with "always" in this session: tool name + JSON arguments. */
  always: Set<string>;
  /** Records each decision (for the session log), if set. */
  record?: (entry: { tool: string; verdict: Verdict; outcome: string }) => void;
}

/**
 * Decides one invocation.
 *
 * @returns undefined when the call may run, or the error outcome that ends it
 */
export async function gate(
  ctx: GateContext,
  tool: Tool,
  inv: Pick<Invocation, "args" | "cwd" | "env">,
): Promise<Outcome | undefined> {
  const name = tool.declaration.name;
  const verdict = decide(ctx.policy, {
    tool: name,
    // A tool from the project's own .magi/ folder came with a cloned repository, not from
    // the person: no default rule trusts the source "project", so it is asked about.
    source: tool.origin.project ? "project" : tool.origin.source,
    args: inv.args,
    cwd: inv.cwd,
    path: inv.env.PATH,
  });
  const settled = await settle(ctx, name, name + " " + JSON.stringify(inv.args), verdict);
  if (settled === true) return undefined;
  return { isError: true, note: `[magi: ${settled} by the policy — ${verdictLine(verdict)}]` };
}

/**
 * Settles a verdict: `allow` passes; `deny` fails; `ask` passes for a person's own call, or
 * goes to the approver (remembering "always" under `key`), and fails with no one to ask.
 *
 * @returns true when the call may run, else the word for the refusal ("denied", …)
 */
async function settle(
  ctx: GateContext,
  name: string,
  key: string,
  verdict: Verdict,
): Promise<true | string> {
  const done = (outcome: string, result: true | string) => {
    ctx.record?.({ tool: name, verdict, outcome });
    return result;
  };
  if (verdict.decision === "allow") return done("allowed", true);
  if (verdict.decision === "deny") return done("denied", "denied");
  if (ctx.caller === "person") return done("approved: the person's own call", true);
  if (ctx.always.has(key)) return done("approved: always, earlier in this session", true);
  const answer = ctx.approve ? await ctx.approve({ tool: name, verdict }) : undefined;
  if (answer === "yes") return done("approved by the person", true);
  if (answer === "always") {
    ctx.always.add(key);
    return done("approved by the person for this session", true);
  }
  if (answer === "no") return done("refused by the person", "refused by the person, asked");
  return done(
    "denied: no person to ask",
    "denied (no person to approve it: a non-interactive ask is a denial)",
  );
}

/** How the policy settled a command a tool's body starts. */
export type CommandGate =
  | { refused: string }
  | { allowed: "by-rule" | "by-person" };

/**
 * Decides a program that a tool's body starts (a Lua body's `magi.exec`) as the policy
 * decides a `run` of the same command line, with the caller and approver of the tool call
 * the body belongs to (none while a declaration file loads: only rules allow then).
 *
 * @param argv the program, then its arguments
 * @param line the same command as a shell line (each word quoted), for rules and messages
 * @param cwd the absolute folder it runs in
 * @param tool the tool whose body starts it: the person is asked about `TOOL (magi.exec)`
 * @param opts.project the body is from a project's `.magi/tools`: even a person's own call
 *   (`magi call`) does not approve an ask; only a person asked, or a rule, does
 */
export async function gateCommand(
  policy: Policy,
  inv: Invocation | undefined,
  argv: readonly string[],
  line: string,
  cwd: string,
  tool?: string,
  opts: { project?: boolean } = {},
): Promise<CommandGate> {
  const outer = inv ? callerOf(inv) : undefined;
  let always = alwaysByPolicy.get(policy);
  if (!always) alwaysByPolicy.set(policy, always = new Set());
  const verdict = decide(policy, {
    tool: "run",
    source: "builtin",
    args: { command: line },
    cwd,
    path: inv?.env.PATH,
    // No bash starts it: the words are read as they are, `echo` is the program PATH finds.
    argv,
  });
  // A project's own tool came with the repository: calling it by hand approves the tool, not
  // each program its body starts, so those are asked about as for a model's call.
  const caller: Caller = opts.project ? "model" : outer?.caller ?? "model";
  const ctx = { policy, caller, approve: outer?.approve, always };
  const asked = tool === undefined ? "run" : `${tool} (magi.exec)`;
  const settled = await settle(ctx, asked, "run " + JSON.stringify({ command: line }), verdict);
  if (settled !== true) {
    const why = opts.project && outer?.caller === "person"
      ? " (a project's .magi/tools body: its programs are asked about even in magi call)"
      : "";
    return { refused: `${settled} by the policy — ${verdictLine(verdict)}${why}` };
  }
  return { allowed: verdict.decision === "allow" ? "by-rule" : "by-person" };
}

/**
 * Decides a tool that a project's own declaration reaches (`transport = "builtin"` or
 * `"casper"`) as a model's call of it: the person's call approved the project's tool, not
 * the builtin or peer tool it names. A rule, or a person asked, lets it run.
 *
 * @returns undefined when the call may run, or the error outcome that ends it
 */
export async function gateForProject(
  policy: Policy,
  tool: Tool,
  inv: Invocation,
): Promise<Outcome | undefined> {
  const outer = callerOf(inv);
  let always = alwaysByPolicy.get(policy);
  if (!always) alwaysByPolicy.set(policy, always = new Set());
  const refused = await gate(
    { policy, caller: "model", approve: outer?.approve, always },
    tool,
    inv,
  );
  if (!refused || outer?.caller !== "person") return refused;
  const why = " (a project's .magi/tools declaration: the tool it names is asked about even " +
    "in magi call)";
  return { ...refused, note: (refused.note ?? "").replace(/\]?$/, (end) => why + end) };
}

/** The tool with every invocation passing the gate first. */
export function guarded(ctx: GateContext, tool: Tool): Tool {
  return {
    ...tool,
    invoke: async (inv) => (await gate(ctx, tool, inv)) ?? await tool.invoke(inv),
  };
}

const alwaysByPolicy = new WeakMap<Policy, Set<string>>();

/** Who made the outer call, carried on the invocation to tools a tool calls in turn. */
const CALLER = Symbol("magi.caller");

function callerOf(inv: Invocation): { caller: Caller; approve?: Approver } | undefined {
  return (inv as Invocation & { [CALLER]?: { caller: Caller; approve?: Approver } })[CALLER];
}

/**
 * A builtin as another tool reaches it (a Lua declaration with `transport = "builtin"`):
 * every invocation is decided again as a call of the builtin itself, with the outer call's
 * caller — so re-describing `run` or `write` in Lua cannot skip the policy.
 */
export function gatedInner(policy: () => Policy, tool: Tool): Tool {
  return {
    ...tool,
    invoke: async (inv) => {
      const outer = callerOf(inv);
      let always = alwaysByPolicy.get(policy());
      if (!always) alwaysByPolicy.set(policy(), always = new Set());
      const ctx = {
        policy: policy(),
        caller: outer?.caller ?? "model",
        approve: outer?.approve,
        always,
      };
      return (await gate(ctx, tool, inv)) ?? await tool.invoke(inv);
    },
  };
}

/**
 * The gated tool for one call of `runTool`: the runtime's policy, the call's caller
 * (default "model") and approver, and the session's "always" approvals.
 */
export function guardedFor(
  rt: { policy: Policy },
  call: { caller?: Caller; approve?: Approver },
  tool: Tool,
): Tool {
  let always = alwaysByPolicy.get(rt.policy);
  if (!always) alwaysByPolicy.set(rt.policy, always = new Set());
  const gated = guarded({
    policy: rt.policy,
    caller: call.caller ?? "model",
    approve: call.approve,
    always,
  }, tool);
  // While the call runs, the approvals socket may ask its person.
  return {
    ...gated,
    invoke: async (inv) => {
      const release = lendApprover(rt.policy, call.approve);
      try {
        const env = brokerEnv(rt, tool, inv.env);
        const sandbox = sandboxed(tool)
          ? sandboxFor(rt.policy, rt.policy.env.PATH ?? "", sandboxSockets(env))
          : undefined;
        if (sandbox) {
          const problem = await sandbox.problem();
          if (problem) {
            return {
              isError: true,
              note: `[magi: the sandbox is on (config policy.sandbox) but ${problem}; ` +
                "refusing to run the command unsandboxed]",
            };
          }
        }
        return await gated.invoke({
          ...inv,
          env,
          ...(sandbox ? { sandbox: sandbox.wrap } : {}),
          [CALLER]: { caller: call.caller ?? "model", approve: call.approve },
        } as Invocation);
      } finally {
        release();
      }
    },
  };
}

/**
 * A Deno tool from a tools folder gets magi's permission broker (`DENO_PERMISSION_BROKER_PATH`,
 * also named by `MAGI_PRIV`): its permission checks are answered by the policy.
 */
function brokerEnv(
  rt: { policy: Policy; session?: { cwd: string } },
  tool: Tool,
  env: Record<string, string>,
): Record<string, string> {
  if (tool.origin.source !== "tools_dir" && tool.origin.source !== "shipped") return env;
  const exe = join(tool.origin.where, tool.declaration.name);
  if (!isDenoScript(exe)) return env;
  const sockets = env.MAGI_APPROVAL_SOCK ? [env.MAGI_APPROVAL_SOCK] : [];
  const path = serveBroker(rt.policy, {
    readable: [tool.origin.where],
    sockets,
    cwd: rt.session?.cwd ?? "/",
  });
  return { ...env, MAGI_PRIV: path, DENO_PERMISSION_BROKER_PATH: path };
}

/** The tools that start programs: `run`, tools from tools folders, Lua declarations, peers. */
function sandboxed(tool: Tool): boolean {
  const { source } = tool.origin;
  if (source === "builtin") return tool.declaration.name === "run";
  return source === "tools_dir" || source === "shipped" || source === "lua" || source === "peer";
}
