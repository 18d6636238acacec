/**
 * What an agent lends the sub-agents it starts: its provider, its session (the parent's id),
 * the shared mailbox and its depth.
 *
 * @module
 */
import type { ContextSettings } from "../compact.ts";
import type { Provider } from "../provider.ts";
import type { Session } from "../session.ts";
import type { Runtime } from "../../runtime/runtime.ts";

/** Where magi's own agent tools come from (their `origin.where`). */
export const MAGI_AGENT_TOOLS = new Set(["magi:agent", "magi:mail"]);

/** An agent as its sub-agents see it. */
export interface AgentHost {
  provider: Provider;
  maxRetries: number;
  /** The longest answer, in tokens (config `providers.NAME.max_tokens`). */
  maxTokens?: number;
  /** The context window and when to compact, as the parent's. */
  context?: ContextSettings;
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
