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
import type { Invocation, Outcome, Tool } from "../core/types.ts";
import { join } from "node:path";
import { lendApprover, type Lent, TOKEN_VARIABLE } from "./approvals.ts";
import { isDenoScript, serveBroker } from "./broker.ts";
import type { CallFacts, Policy, Verdict } from "./decide.ts";
import {
  type Approver,
  type Caller,
  door,
  type DoorCall,
  type Effects,
  type Ruling,
  settle,
} from "./door.ts";
import { effectsOf } from "./effects.ts";
import { judge, launcherFor, sessionSettings } from "./facts.ts";
import { trackLaunches, type Wrap } from "../confinement/sandbox.ts";
import { watchWrites } from "./planted.ts";

export type { ApprovalAnswer, Approver, Caller } from "./door.ts";

/** What passing the door needs from the runtime and the call. */
export interface GateContext {
  policy: Policy;
  caller: Caller;
  approve?: Approver;
  /** Calls approved with "always" in this session: tool name + JSON arguments. */
  always: Set<string>;
  /** Records each decision (for the session log), if set. */
  record?: (entry: { tool: string; verdict: Verdict; outcome: string }) => void;
  /** Tells the person what was refused and what would allow it (stderr), if set. */
  tell?: (line: string) => void;
}

/** How a call passed the door. */
export type Passage =
  | { refused: string }
  | { wrap?: Wrap; byPerson: boolean; ruling: Ruling };

/**
 * Takes one call through the door: gathers its facts (`facts.ts`), rules (`door.ts`) and
 * settles an ask.
 *
 * @param name the tool as the person is asked about it
 * @param key the call's identity for "always"
 */
export async function pass(
  ctx: GateContext,
  name: string,
  facts: CallFacts,
  effects: Effects,
  key: string,
  opts: { project?: boolean } = {},
): Promise<Passage> {
  const verdict = judge(ctx.policy, facts);
  const call: DoorCall = {
    tool: name,
    verdict,
    effects,
    caller: ctx.caller,
    settings: sessionSettings(ctx.policy),
    project: opts.project,
    args: facts.args,
  };
  let ruling = door(call);
  // --auto approves what is asked, but not a line the judge cannot read while a deny rule of
  // the person's covers the tool: what it runs could be what the rule forbids.
  if (
    call.settings.approval === "never" && ruling.decision === "ask" && verdict.unread &&
    ctx.policy.rules.some((r) =>
      r.decision === "deny" && r.origin !== "default" && r.matchTool(name)
    )
  ) {
    ruling = {
      ...ruling,
      decision: "deny",
      why: `${verdict.unread}; --auto refuses what the judge cannot read while a deny rule ` +
        `covers "${name}" (a person in magi chat can approve it)`,
    };
  }
  const settled = await settle(ctx, call, ruling, key);
  if (!settled.run) return { refused: settled.refusal };
  return { wrap: launcherFor(ctx.policy, settled.sandbox), byPerson: settled.byPerson, ruling };
}

/** The facts of one tool call, for the judge. */
function toolFacts(tool: Tool, inv: Pick<Invocation, "args" | "cwd" | "env">): CallFacts {
  return {
    tool: tool.declaration.name,
    // A tool from the project's own .magi/ folder came with a cloned repository, not from
    // the person: no default rule trusts the source "project", so it is asked about.
    source: tool.origin.project ? "project" : tool.origin.source,
    args: inv.args,
    cwd: inv.cwd,
    path: inv.env.PATH,
  };
}

/**
 * Decides one invocation of a tool and, when it may run, gives the sandbox it runs in.
 *
 * @returns the refusal outcome, or how it runs
 */
export async function gate(
  ctx: GateContext,
  tool: Tool,
  inv: Pick<Invocation, "args" | "cwd" | "env">,
  opts: { project?: boolean; reached?: boolean } = {},
): Promise<Outcome | { wrap?: Wrap }> {
  const name = tool.declaration.name;
  const passed = await pass(
    ctx,
    name,
    toolFacts(tool, inv),
    effectsOf(tool, inv.args, inv.cwd),
    name + " " + JSON.stringify(inv.args),
    { project: opts.project },
  );
  if ("refused" in passed) {
    return {
      isError: true,
      code: "denied",
      note: `[magi: ${passed.refused}${reachedHint(ctx, opts)}]`,
    };
  }
  return { wrap: passed.wrap };
}

function isOutcome(x: Outcome | { wrap?: Wrap }): x is Outcome {
  return "isError" in x;
}

/** How the policy settled a command a tool's body starts. */
export type CommandGate =
  | { refused: string }
  | { allowed: "by-rule" | "by-person"; wrap?: Wrap };

/**
 * Decides a program that a tool's body starts (a Lua body's `magi.exec`) as the door decides
 * a `run` of the same command line, with the caller and approver of the tool call the body
 * belongs to (none while a declaration file loads: only rules allow then).
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
  const ctx = contextOf(policy, outer);
  const asked = tool === undefined ? "run" : `${tool} (magi.exec)`;
  const passed = await pass(
    ctx,
    asked,
    {
      tool: "run",
      source: "builtin",
      args: { command: line },
      cwd,
      path: inv?.env.PATH,
      // No bash starts it: the words are read as they are, `echo` is the program PATH finds.
      argv,
    },
    { reads: [cwd], writes: [], starts: [argv[0]], network: false },
    "run " +
      JSON.stringify({ command: line }),
    { project: opts.project },
  );
  if ("refused" in passed) {
    const why = opts.project && outer?.caller === "person"
      ? " (a project's .magi/tools body: its programs are asked about even in magi call)"
      : "";
    return { refused: `${passed.refused}${why}` };
  }
  return { allowed: passed.byPerson ? "by-person" : "by-rule", wrap: passed.wrap };
}

/**
 * Decides a tool that a project's own declaration reaches (`transport = "builtin"` or
 * `"casper"`) as a project's call of it: the person's call approved the project's tool, not
 * the builtin or peer tool it names. A rule, or a person asked, lets it run.
 *
 * @returns undefined when the call may run, or the error outcome that ends it
 */
export async function gateForProject(
  policy: Policy,
  tool: Tool,
  inv: Invocation,
): Promise<Outcome | undefined> {
  const ctx = contextOf(policy, callerOf(inv));
  const got = await gate(ctx, tool, inv, { project: true, reached: true });
  return isOutcome(got) ? got : undefined;
}

function reachedHint(ctx: GateContext, opts: { reached?: boolean }): string {
  return opts.reached && ctx.caller === "person"
    ? " (a project's .magi/tools declaration: the tool it names is asked about even in magi call)"
    : "";
}

const alwaysByPolicy = new WeakMap<Policy, Set<string>>();

function alwaysOf(policy: Policy): Set<string> {
  let always = alwaysByPolicy.get(policy);
  if (!always) alwaysByPolicy.set(policy, always = new Set());
  return always;
}

/** Who made the outer call, carried on the invocation to tools a tool calls in turn. */
const CALLER = Symbol("magi.caller");

interface Outer {
  caller: Caller;
  approve?: Approver;
  tell?: (line: string) => void;
}

function callerOf(inv: Invocation): Outer | undefined {
  return (inv as Invocation & { [CALLER]?: Outer })[CALLER];
}

/** The door's context for a call a tool makes in turn: the outer call's caller ("model" if none). */
function contextOf(policy: Policy, outer: Outer | undefined): GateContext {
  return {
    policy,
    caller: outer?.caller ?? "model",
    approve: outer?.approve,
    always: alwaysOf(policy),
    tell: outer?.tell ?? sessionSettings(policy).tell,
  };
}

/**
 * A builtin as another tool reaches it (a Lua declaration with `transport = "builtin"`):
 * every invocation passes the door again as a call of the builtin itself, with the outer
 * call's caller — so re-describing `run` or `write` in Lua cannot skip the policy.
 */
export function gatedInner(policy: () => Policy, tool: Tool): Tool {
  return {
    ...tool,
    invoke: async (inv) => {
      const ctx = contextOf(policy(), callerOf(inv));
      const got = await gate(ctx, tool, inv);
      if (isOutcome(got)) return got;
      const launches = trackLaunches(got.wrap);
      const watch = watchWrites(ctx.policy, tool, got.wrap);
      let outcome: Outcome;
      try {
        outcome = await tool.invoke({ ...inv, sandbox: launches.wrap });
      } finally {
        launches.release();
      }
      return watch.end(outcome, ctx.tell);
    },
  };
}

/**
 * The tool for one call of `runTool`: each invocation passes the door with the call's caller
 * (default "model") and approver and the session's "always" approvals, and runs in the
 * sandbox the door chose.
 */
export function guardedFor(
  rt: { policy: Policy },
  call: { caller?: Caller; approve?: Approver; tell?: (line: string) => void },
  tool: Tool,
): Tool {
  const outer: Outer = { caller: call.caller ?? "model", approve: call.approve, tell: call.tell };
  const ctx: GateContext = { ...contextOf(rt.policy, outer) };
  return {
    ...tool,
    invoke: async (inv) => {
      // While the call runs, its requests on the approvals socket (bound to it by the token
      // in its environment) ask its own approver.
      const lent: Lent = inv.env.MAGI_APPROVAL_SOCK
        ? lendApprover(rt.policy, { tool: tool.declaration.name, approve: call.approve })
        : { release: () => {} };
      const release = lent.release;
      try {
        // The broker's socket first: the sandbox the gate picks must let the tool reach it.
        const env = brokerEnv(
          rt,
          tool,
          lent.token ? { ...inv.env, [TOKEN_VARIABLE]: lent.token } : inv.env,
        );
        const got = await gate(ctx, tool, { ...inv, env });
        if (isOutcome(got)) return got;
        // The empty folders bwrap makes as mount points go once the call's programs have.
        const launches = trackLaunches(got.wrap);
        // What the call plants in the roots' repositories is disarmed (`planted.ts`).
        const watch = watchWrites(rt.policy, tool, got.wrap);
        let outcome: Outcome;
        try {
          outcome = await tool.invoke({
            ...inv,
            env,
            sandbox: launches.wrap,
            [CALLER]: outer,
          } as Invocation);
        } finally {
          launches.release();
        }
        return watch.end(outcome, ctx.tell);
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
    namespaced: sessionSettings(rt.policy).mode !== "off",
  });
  const reachable = sessionSettings(rt.policy).sockets;
  if (!reachable.includes(path)) reachable.push(path);
  return { ...env, MAGI_PRIV: path, DENO_PERMISSION_BROKER_PATH: path };
}
