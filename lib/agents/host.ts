/**
 * What an agent lends the sub-agents it starts — its provider, its session (the parent's id),
 * the shared mailbox and its depth — and {@link installAgentTools}, which puts `agent` (while
 * the depth allows) and, in a sub-agent, `mail` into a runtime's registry and points its
 * inbox at the mailbox.
 *
 * @module
 */
import type { Provider } from "../agent/provider.ts";
import type { Session } from "../agent/session.ts";
import { Registry } from "../registry/registry.ts";
import type { Runtime } from "../runtime.ts";
import { mailText, takeMail } from "./mailbox.ts";
import { agentTool, mailTool } from "./tool.ts";

/** Where magi's own agent tools come from (their `origin.where`). */
export const MAGI_AGENT_TOOLS = new Set(["magi:agent", "magi:mail"]);

/** An agent as its sub-agents see it. */
export interface AgentHost {
  provider: Provider;
  maxRetries: number;
  /** This agent's session (a child's MAGI_PARENT is its id). */
  session: Session;
  sessionsDir: string;
  /** The mailbox folder every agent of the tree shares (MAGI_MAIL_DIR). */
  mailDir: string;
  /** 0 for the agent the person started; a sub-agent's is its parent's plus one. */
  depth: number;
  /** The parent's session id, for a sub-agent. */
  parent?: string;
}

/** The most levels of sub-agents (config `agents.max_depth`). */
export function maxDepth(rt: Runtime): number {
  const v = rt.config.values["agents.max_depth"];
  return typeof v === "number" ? v : 2;
}

/**
 * Adds the agent tools to `rt`'s registry — `agent` while `host.depth < agents.max_depth`
 * (and `allowed` lets it), `mail` for a sub-agent — and sets `rt.inbox` to the host's mail.
 *
 * @param allowed the tool names a profile allows (undefined: all)
 */
export function installAgentTools(rt: Runtime, host: AgentHost, allowed?: Set<string>): void {
  const extra = [];
  if (host.depth < maxDepth(rt) && (!allowed || allowed.has("agent"))) {
    extra.push(agentTool(rt, host));
  }
  if (host.parent) extra.push(mailTool(host));
  // Another agent's `agent` and `mail` (a parent's, in a child's subset) are replaced.
  const kept = rt.registry.list().filter((t) => !MAGI_AGENT_TOOLS.has(t.origin.where));
  rt.registry = new Registry([...kept, ...extra], rt.warn);
  rt.inbox = () =>
    takeMail(host.mailDir, host.session.id, rt.warn).map((m) => ({
      from: m.from,
      text: mailText(m),
    }));
}
