/**
 * The facts the door decides on, gathered before it (SPEC S8.1): the judge's verdict — the
 * rules over the call, which need the file system and PATH (real paths of the words, the
 * program each name finds) — the session's sandbox settings and whether a sandbox can start.
 * `door.ts` itself reads nothing.
 *
 * @module
 */
import { type CallFacts, decide, type Policy, type Verdict } from "./decide.ts";
import type { DoorSettings } from "./door.ts";
import {
  HIDDEN_IN_HOME,
  sandboxLauncher,
  type SandboxSettings,
  sandboxSettings,
  type Wrap,
} from "./sandbox.ts";

/** The session's settings for the door, with the sandbox's own. */
export interface SessionSettings extends DoorSettings {
  sandbox: SandboxSettings;
  /** Unix sockets a sandboxed command may reach (the approvals socket). */
  sockets: string[];
  /** Tells the person (stderr) what a model's call was refused and what would allow it. */
  tell?: (line: string) => void;
}

const settingsOf = new WeakMap<Policy, SessionSettings>();

/** Sets the session's settings of a policy (the runtime does, once). */
export function setSessionSettings(policy: Policy, settings: SessionSettings): void {
  settingsOf.set(policy, settings);
}

/**
 * The session's settings of a policy; a policy no runtime set up (a test's) runs as the
 * legacy `policy.sandbox` says: sandboxed in workspace-write when it is on, else unsandboxed.
 */
export function sessionSettings(policy: Policy): SessionSettings {
  const set = settingsOf.get(policy);
  if (set) return set;
  const sandbox = sandboxSettings(policy.sandbox ? true : { mode: "off" });
  if (typeof policy.sandbox === "object" && policy.sandbox.network) sandbox.network = true;
  return { mode: sandbox.mode, explicit: true, approval: "ask", sandbox, sockets: [] };
}

/** The judge's verdict on a call: the rules, after the file-system look-ups they need. */
export function judge(policy: Policy, facts: CallFacts): Verdict {
  return decide(policy, facts);
}

/** The launcher for a call the door lets run in `mode`; undefined for "off". */
export function launcherFor(
  policy: Policy,
  mode: "read-only" | "workspace-write" | "off",
): Wrap | undefined {
  if (mode === "off") return undefined;
  const settings = sessionSettings(policy);
  const home = policy.env.HOME ?? "";
  return sandboxLauncher(settings.sandbox, {
    roots: policy.roots,
    home,
    hidden: home ? HIDDEN_IN_HOME.map((h) => `${home}/${h}`) : [],
    sockets: settings.sockets,
  }, mode);
}
