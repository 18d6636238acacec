/**
 * Starting an agent: the provider from config and flags, a new or resumed session, and the
 * runtime pointed at it — MAGI_SESSION, MAGI_SESSIONS_DIR, MAGI_CONTEXT_PATH and
 * MAGI_ATTACH_DIR for tools, and spill files kept inside the session folder.
 *
 * @module
 */
import { sessionSettings } from "../policy/facts.ts";
import { join } from "node:path";
import type { Runtime } from "../runtime/runtime.ts";
import { promptFor } from "./prompt.ts";
import type { HttpWatch } from "./http_watch.ts";
import type { Provider } from "./provider.ts";
import type { ContextSettings } from "./compact.ts";
import { chooseProvider } from "./providers.ts";
import { defaultSessionsDir, Session } from "./session.ts";
import { onApproval } from "../policy/approvals.ts";
import { privateDir } from "../core/private.ts";
import { installAgentTools } from "./subagents/tool.ts";

/** A provider, a session and the system prompt, ready for {@link runAgent}. */
export interface Agent {
  provider: Provider;
  maxRetries: number;
  /** The longest answer asked for, in tokens. */
  maxTokens: number;
  /** The context window and when to compact (for `runAgent`'s `context`). */
  context: ContextSettings;
  /** The provider's HTTP requests (its SDK's retries, the last URL tried). */
  http: HttpWatch;
  session: Session;
  system: string;
}

/** What `runAgent` takes from an agent as it is: its prompt and the provider's settings. */
export function agentSettings(
  agent: Agent,
): Pick<Agent, "system" | "maxRetries" | "maxTokens" | "context"> {
  const { system, maxRetries, maxTokens, context } = agent;
  return { system, maxRetries, maxTokens, context };
}

/** The flags `magi run` and `magi chat` share. */
export interface AgentFlags {
  provider?: string;
  model?: string;
  resume?: string;
}

/**
 * Builds the agent and points the runtime at its session.
 *
 * @throws ProviderConfigError when no usable provider is configured
 * @throws Error when the session to resume cannot be found
 */
export function startAgent(rt: Runtime, flags: AgentFlags, now = new Date()): Agent {
  const v = rt.config.values;
  const sessionsDir = v.sessions_dir ?? defaultSessionsDir(rt.env);
  let session: Session;
  let providerFlags = { provider: flags.provider, model: flags.model };
  if (flags.resume) {
    session = Session.open(sessionsDir, flags.resume, rt.masker, rt.warn);
    const meta = session.meta;
    if (meta && !flags.provider && v.provider === undefined) {
      providerFlags = { provider: meta.provider, model: flags.model ?? meta.model };
    }
  }
  const { provider, maxRetries, maxTokens, context, http } = chooseProvider(
    v,
    providerFlags,
    rt.env,
  );
  session ??= Session.create(sessionsDir, rt.masker, {
    cwd: rt.session.cwd,
    provider: provider.name,
    model: provider.model,
  });
  const attach = join(session.dir, "attach");
  privateDir(attach);
  rt.context = {
    ...rt.context,
    MAGI_SESSION: session.id,
    MAGI_SESSIONS_DIR: sessionsDir,
    MAGI_CONTEXT_PATH: session.contextPath,
    MAGI_ATTACH_DIR: attach,
  };
  rt.spillDir = join(session.dir, "spill");
  // magi's state stays hidden from sandboxed commands, but for this session's own folder
  // (read-only: MAGI_CONTEXT_PATH) and its attachments folder (writable: MAGI_ATTACH_DIR).
  const reach = sessionSettings(rt.policy);
  (reach.hidden ??= []).push(sessionsDir);
  (reach.visible ??= []).push(session.dir);
  (reach.writable ??= []).push(attach);
  onApproval(rt.policy, (r) => session.append({ type: "approval", ...r }));
  // Sub-agents (lib/agents/): `agent` in the registry, the mailbox the tree shares (writable
  // for tools: MAGI_MAIL_DIR) and this session's inbox, read at each turn.
  const mailDir = privateDir(join(session.dir, "mail"));
  reach.writable.push(mailDir);
  installAgentTools(rt, {
    provider,
    maxRetries,
    maxTokens,
    context,
    session,
    sessionsDir,
    mailDir,
    depth: 0,
  });
  const system = promptFor(rt, now).text;
  return { provider, maxRetries, maxTokens, context, http, session, system };
}
