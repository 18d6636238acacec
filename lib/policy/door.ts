/**
 * The door (SPEC S8.1): the one function that decides whether a call may run and in which
 * sandbox. Every path a call takes passes it — `runTool`'s gate, a Lua body's `magi.exec`, a
 * project's declaration reaching a builtin or peer, the approvals socket, the broker and
 * MCP-served calls. It is pure: the judge's verdict (rules over the call, with the file-system
 * and PATH look-ups it needs) is gathered before it, in `facts.ts`.
 *
 * Sandbox modes: for a model (or an MCP client), what a default rule allows without asking
 * runs `read-only`; what the person's own allow rule allows, what the person approves and
 * what `--auto` approves runs `workspace-write`. The person's own `magi call` runs in the
 * configured mode (unsandboxed unless `sandbox.mode` or `--sandbox` sets one). The session's
 * `read-only` caps every call; `off` runs everything unsandboxed. Where no sandbox can start,
 * a call that starts programs and would be allowed silently is asked about instead.
 *
 * @module
 */
import type { Verdict } from "./decide.ts";
import type { SandboxMode } from "../config/sandbox_settings.ts";
import type { Effects } from "../core/types.ts";

export type { Effects } from "../core/types.ts";

/** Who makes a call: the person by hand (`magi call`), a model (the agent), an MCP client. */
export type Caller = "person" | "model" | "mcp";

/** Config `approval`: "ask" (default) asks the person; "never" (`--auto`) approves asks. */
export type ApprovalMode = "ask" | "never";

/** The session's settings the door reads. */
export interface DoorSettings {
  /** The session's sandbox mode (`--sandbox`, config `sandbox.mode`). */
  mode: SandboxMode;
  /** Whether the mode was set by the person (config or flag). */
  explicit: boolean;
  /** Why no sandbox can start here, or undefined when one can. */
  problem?: string;
  approval: ApprovalMode;
}

/** One call at the door, its facts gathered. */
export interface DoorCall {
  /** The tool's name as rules and messages name it (`run`, `TOOL (magi.exec)`). */
  tool: string;
  /** The judge's verdict on the call (see `facts.ts`). */
  verdict: Verdict;
  effects: Effects;
  caller: Caller;
  settings: DoorSettings;
  /**
   * The call comes from a project's `.magi/` folder (or is reached by one): the person's own
   * call approved the project's tool, not what it starts — an ask is not approved for them.
   */
  project?: boolean;
  /** The call's arguments, for the person asked (a `run` line's prefix rule). */
  args?: Record<string, unknown>;
  /**
   * The call asks for more than its own ruling gave it (a tool's request on the approvals
   * socket): only a person grants that. `--auto` does not approve it; with no person it is
   * refused. A rule of the person's that allows it still does.
   */
  escalation?: boolean;
}

/** The door's ruling, before an `ask` is settled. */
export interface Ruling {
  decision: "allow" | "ask" | "deny";
  verdict: Verdict;
  /** The sandbox the call runs in when allowed, and when an ask is approved. */
  sandbox: "read-only" | "workspace-write" | "off";
  /** Why the door asks although the judge allows (no sandbox here). */
  why?: string;
}

/** Whether a call starts programs, so a sandbox applies to it. */
export function startsPrograms(effects: Effects): boolean {
  return effects.starts.length > 0;
}

/** Decides one call. Pure: the same call, verdict and settings give the same ruling. */
export function door(call: DoorCall): Ruling {
  const { verdict, settings } = call;
  const cap = (mode: "read-only" | "workspace-write"): Ruling["sandbox"] =>
    settings.mode === "off" ? "off" : settings.mode === "read-only" ? "read-only" : mode;
  if (verdict.decision === "deny") return { decision: "deny", verdict, sandbox: cap("read-only") };
  const starts = startsPrograms(call.effects);
  if (call.caller === "person" && !call.project) {
    // The person's own call runs as configured: unsandboxed unless a mode was set.
    const sandbox = settings.explicit ? cap("workspace-write") : "off";
    if (sandbox !== "off" && starts && settings.problem) {
      return { decision: "deny", verdict, sandbox, why: noSandboxRefusal(settings.problem) };
    }
    return { decision: "allow", verdict, sandbox };
  }
  const ownRule = verdict.rule !== null && verdict.rule.origin !== "default";
  const sandbox = verdict.decision === "allow" && !ownRule
    ? cap("read-only")
    : cap("workspace-write");
  if (sandbox !== "off" && starts && settings.problem) {
    // Never a model's command unsandboxed: what would run silently is asked about.
    return {
      decision: "ask",
      verdict,
      sandbox: "off",
      why: `no sandbox can start here (${settings.problem}); it would run unsandboxed`,
    };
  }
  return { decision: verdict.decision, verdict, sandbox };
}

/** The refusal when the person set a sandbox mode that cannot start. */
function noSandboxRefusal(problem: string): string {
  return `the sandbox is on (sandbox.mode or --sandbox) but ${problem}; ` +
    "refusing to run the command unsandboxed (--sandbox off runs it unsandboxed)";
}

/** A person's answer to a policy question; undefined when no person can answer. */
export type ApprovalAnswer = "yes" | "no" | "always" | undefined;

/**
 * Asks the person whether a call may run; `args` are the call's (a `run` line's `command`).
 * `escalation`: a running tool asks for more than its call was given (the approvals socket);
 * only a person answers that — an approver that is not one (a hook's "allow") passes it on.
 */
export type Approver = (
  request: {
    tool: string;
    verdict: Verdict;
    args?: Record<string, unknown>;
    escalation?: boolean;
  },
) => Promise<ApprovalAnswer>;

/** What settling an ask needs. */
export interface SettleContext {
  approve?: Approver;
  /** Calls approved with "always" in this session. */
  always: Set<string>;
  /** Records each decision (for the session log), if set. */
  record?: (entry: { tool: string; verdict: Verdict; outcome: string }) => void;
  /** Tells the person (stderr) what was refused and what would allow it. */
  tell?: (line: string) => void;
}

/** How a ruling was settled. */
export type Settled =
  | { run: true; sandbox: Ruling["sandbox"]; byPerson: boolean }
  | { run: false; refusal: string };

/**
 * Settles a ruling: `allow` runs; `deny` is refused; `ask` goes to "always", `--auto`
 * (approval "never"; not for an escalation) or the approver (told `escalation` for one) —
 * approved, it runs in the ruling's sandbox — and is refused with no one to ask.
 *
 * @param key the call's identity for "always" (tool name + JSON arguments)
 */
export async function settle(
  ctx: SettleContext,
  call: DoorCall,
  ruling: Ruling,
  key: string,
): Promise<Settled> {
  const { verdict } = ruling;
  const name = call.tool;
  const line = verdictLineOf(ruling);
  const done = (outcome: string, s: Settled): Settled => {
    ctx.record?.({ tool: name, verdict, outcome });
    if (!s.run && call.caller !== "person") {
      ctx.tell?.(`magi: refused ${name}: ${line}; ${allowHint(call, ruling)}`);
    }
    return s;
  };
  if (ruling.decision === "allow") {
    // The person's own call allows what the judge asks about: that is the person's approval.
    const byPerson = verdict.decision !== "allow";
    return done("allowed", { run: true, sandbox: ruling.sandbox, byPerson });
  }
  if (ruling.decision === "deny") {
    return done("denied", {
      run: false,
      refusal: ruling.why ? `denied: ${ruling.why}` : `denied by the policy — ${line}`,
    });
  }
  const approved = (outcome: string) =>
    done(outcome, { run: true, sandbox: ruling.sandbox, byPerson: true });
  if (ctx.always.has(key)) return approved("approved: always, earlier in this session");
  if (call.settings.approval === "never" && !ruling.why && !call.escalation) {
    return approved("approved: --auto (approval never)");
  }
  const answer = ctx.approve
    ? await ctx.approve({
      tool: name,
      verdict: ruling.why ? { ...verdict, reason: `${verdict.reason}; ${ruling.why}` } : verdict,
      ...(call.args ? { args: call.args } : {}),
      ...(call.escalation ? { escalation: true } : {}),
    })
    : undefined;
  if (answer === "yes") return approved("approved by the person");
  if (answer === "always") {
    ctx.always.add(key);
    return approved("approved by the person for this session");
  }
  if (answer === "no") {
    return done("refused by the person", {
      run: false,
      refusal: `refused by the person, asked — ${line}`,
    });
  }
  return done("denied: no person to ask", {
    run: false,
    refusal: `denied (no person to approve it: a non-interactive ask is a denial) by the ` +
      `policy — ${line}`,
  });
}

/** The verdict as one line, with the door's own reason when it asks for want of a sandbox. */
export function verdictLineOf(ruling: Ruling): string {
  const v = ruling.verdict;
  const by = v.rule ? `rule "${v.rule.id}" (${v.rule.origin})` : "no rule";
  const why = ruling.why ? ` (${ruling.why})` : "";
  return `${v.decision} by ${by}: ${v.reason}${why}`;
}

/** What would allow a refused call, for the person. */
export function allowHint(call: DoorCall, ruling: Ruling): string {
  if (ruling.why && call.settings.problem) {
    return "install bubblewrap (bwrap) with user namespaces, or give --sandbox off to run " +
      "commands unsandboxed";
  }
  const rule = ruling.verdict.rule;
  if (ruling.verdict.decision === "deny" && rule) {
    return rule.origin === "default"
      ? `the default rule "${rule.id}" refuses it (policy.disable: ["${rule.id}"] removes it)`
      : `the rule "${rule.id}" in ${rule.origin} refuses it`;
  }
  return `an allow rule in your config (policy.rules) or --auto would run it`;
}

/** The sandbox mode a ruling runs in, in words, for `magi policy explain`. */
export function sandboxWords(ruling: Ruling, settled: "now" | "approved"): string {
  const mode = ruling.sandbox;
  const starts = mode === "off" ? "unsandboxed" : `in the ${mode} sandbox`;
  return settled === "now" ? `runs ${starts}` : `runs ${starts} once approved`;
}
