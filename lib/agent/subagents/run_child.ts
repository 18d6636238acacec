/**
 * Running one sub-agent: its own session (linked: `parent` in its first event, MAGI_PARENT in
 * its tools' environment, a `sub_agent` event in the parent's), its own system prompt (the
 * parent's context files and skills, the profile's instructions), a registry that is a subset
 * of the parent's, and the parent's policy object itself — so nothing it runs is judged more
 * loosely than the parent's calls. It has no person to ask: an `ask` is a denial unless
 * `--auto` approves it for the whole tree. Cancelling the parent's call cancels it and its
 * tools' process groups.
 *
 * @module
 */
import { join } from "node:path";
import { type AgentView, runAgent } from "../loop.ts";
import { promptFor } from "../prompt.ts";
import { ProviderError, type Usage } from "../provider.ts";
import { chooseProvider } from "../providers.ts";
import { Session } from "../session.ts";
import { privateDir } from "../../core/private.ts";
import { sessionSettings } from "../../policy/facts.ts";
import { Registry } from "../../registry/registry.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { type AgentHost, MAGI_AGENT_TOOLS } from "./host.ts";
import type { Profile } from "./profiles.ts";

/** The most model requests one sub-agent makes. */
export const CHILD_MAX_TURNS = 50;

/** How a sub-agent ended. */
export interface ChildOutcome {
  session: string;
  reason: string;
  /** Its last answer. */
  answer: string;
  usage: Usage;
  /** The names of the tools it called, in order. */
  calls: string[];
}

/**
 * The tools a profile gives a child, from the parent's registry.
 *
 * @returns the tools, or the refusal line when the profile names a tool the parent lacks
 */
export function childTools(
  rt: Runtime,
  profile: Profile | undefined,
): { tools: ReturnType<Runtime["registry"]["list"]>; allowed?: Set<string> } | string {
  const own = rt.registry.list().filter((t) => !MAGI_AGENT_TOOLS.has(t.origin.where));
  if (!profile?.tools) return { tools: own };
  const allowed = new Set(profile.tools);
  for (const name of allowed) {
    if (!rt.registry.get(name)) {
      return `profile "${profile.name}" (${profile.file}) names the tool "${name}", which this ` +
        "agent does not have: a sub-agent's tools are a subset of its parent's";
    }
  }
  return { tools: own.filter((t) => allowed.has(t.declaration.name)), allowed };
}

/**
 * Starts a sub-agent on `task` and runs it to its answer.
 *
 * @param install puts the child's own agent tools into its runtime (`installAgentTools`)
 * @returns how it ended, or the refusal line (a profile naming a tool the parent lacks)
 */
export async function runChild(
  rt: Runtime,
  host: AgentHost,
  opts: { task: string; profile?: Profile; signal: AbortSignal },
  install: (rt: Runtime, host: AgentHost, allowed?: Set<string>) => void,
): Promise<ChildOutcome | string> {
  const picked = childTools(rt, opts.profile);
  if (typeof picked === "string") return picked;
  let provider = host.provider;
  let maxRetries = host.maxRetries;
  if (opts.profile?.model && opts.profile.model !== provider.model) {
    try {
      ({ provider, maxRetries } = chooseProvider(
        rt.config.values,
        { provider: provider.name, model: opts.profile.model },
        rt.env,
      ));
    } catch (error) {
      return `profile "${opts.profile.name}": ${(error as Error).message}`;
    }
  }
  const session = Session.create(host.sessionsDir, rt.masker, {
    cwd: rt.session.cwd,
    provider: provider.name,
    model: provider.model,
    parent: host.session.id,
  });
  const attach = privateDir(join(session.dir, "attach"));
  const reach = sessionSettings(rt.policy);
  (reach.visible ??= []).push(session.dir);
  (reach.writable ??= []).push(attach);
  const child: Runtime = {
    ...rt,
    registry: new Registry(picked.tools, rt.warn),
    session: { cwd: rt.session.cwd },
    context: {
      ...rt.context,
      MAGI_SESSION: session.id,
      MAGI_CONTEXT_PATH: session.contextPath,
      MAGI_ATTACH_DIR: attach,
      MAGI_PARENT: host.session.id,
      MAGI_MAIL_DIR: host.mailDir,
    },
    spillDir: join(session.dir, "spill"),
  };
  const childHost: AgentHost = {
    provider,
    maxRetries,
    maxTokens: host.maxTokens,
    context: host.context,
    session,
    sessionsDir: host.sessionsDir,
    mailDir: host.mailDir,
    depth: host.depth + 1,
    parent: host.session.id,
  };
  install(child, childHost, picked.allowed);
  const role = [
    ...(opts.profile?.prompt ? [opts.profile.prompt, ""] : []),
    `You are a sub-agent of session ${host.session.id}, started for one task. Your last answer ` +
    "is returned to it as your summary: make it short and complete.",
    ...(child.registry.get("mail")
      ? ["To tell it something before you finish, use the `mail` tool."]
      : []),
  ].join("\n");
  const system = promptFor(child, new Date(), role).text;
  session.append({ type: "user", text: opts.task });
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const calls: string[] = [];
  let answer = "";
  const view: AgentView = {
    text() {},
    answer(text) {
      if (text.trim() !== "") answer = text;
    },
    toolCall(call) {
      calls.push(call.name);
    },
    toolResult() {},
    usage(u) {
      usage.input_tokens += u.input_tokens;
      usage.output_tokens += u.output_tokens;
    },
    retry() {},
    restart() {},
  };
  let reason: string;
  try {
    reason = await runAgent({
      rt: child,
      provider,
      session,
      system,
      maxTurns: CHILD_MAX_TURNS,
      maxRetries,
      maxTokens: host.maxTokens,
      context: host.context,
      signal: opts.signal,
      view,
      unanswered: "a sub-agent has no person to answer a tool's question",
    });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    reason = "provider_failed";
    answer = `[magi: the provider failed: ${rt.masker.maskText(error.message)}]`;
  }
  session.append({ type: "end", reason });
  session.close();
  host.session.append({
    type: "sub_agent",
    id: session.id,
    task: opts.task.slice(0, 200),
    reason,
    ...usage,
  });
  return { session: session.id, reason, answer, usage, calls };
}
