/**
 * Runs the agent loop in-process against a scripted provider server, with a JSON view
 * whose events (notes included) are collected: what `magi run --json` would print.
 *
 * @module
 */
import { join } from "node:path";
import { type EndReason, runAgent } from "../../lib/agent/loop.ts";
import { startAgent } from "../../lib/agent/start.ts";
import type { Session } from "../../lib/agent/session.ts";
import { TerminalView } from "../../lib/terminal/view.ts";
import { Registry } from "../../lib/registry/registry.ts";
import type { Tool } from "../../lib/core/types.ts";
import { tempDir, testRuntime } from "../helpers.ts";
import { type Received, type Reply, scriptedServer } from "./fake_provider.ts";
import { makeTools } from "./setup.ts";

/** What a run left behind; `await using` removes it. */
export interface LoopRun extends AsyncDisposable {
  reason: EndReason | "error";
  error?: Error;
  events: Record<string, unknown>[];
  requests: Received[];
  session: Session;
  dir: string;
  sessionsDir: string;
}

/** A tool that says `text` (an in-process tool: no program is started). */
export function sayingTool(name: string, text: (args: string) => string): Tool {
  return {
    declaration: {
      name,
      description: `${name}: prints a result`,
      parameters: { type: "object", properties: { n: { type: "number" } } },
    },
    origin: { source: "tools_dir", where: "test" },
    async invoke(call) {
      await call.emit.said(text(JSON.stringify(call.args ?? {})));
      return { isError: false };
    },
  };
}

/**
 * Runs one task. `provider` adds fields to the provider's config entry; a thrown
 * ProviderError is returned as `reason: "error"` with `error`.
 */
export async function runLoop(opts: {
  kind: "openai" | "anthropic";
  replies: Reply[] | ((index: number, request: Received) => Reply);
  task: string;
  provider?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** The registry's tools instead of the runtime's own. */
  tools?: Tool[];
  /** Tools added to the runtime's own. */
  extraTools?: Tool[];
  /** A tools folder with the fixture tools every agent test gets (`setup.ts`). */
  fixtureTools?: boolean;
  maxTurns?: number;
  /** Keep the session in memory-backed storage (`/dev/shm`) where there is one: a long session's fsyncs cost seconds on disk. */
  fastSessions?: boolean;
}): Promise<LoopRun> {
  const dir = await tempDir();
  let shm: string | undefined;
  if (opts.fastSessions) {
    try {
      shm = await Deno.makeTempDir({ dir: "/dev/shm", prefix: "magi-sessions-" });
    } catch { /* no /dev/shm: the temp folder */ }
  }
  const sessionsDir = shm ?? join(dir.path, "sessions");
  const server = scriptedServer(opts.kind, opts.replies);
  const t = await testRuntime({
    cwd: dir.path,
    ...(opts.fixtureTools ? { toolsDirs: [await makeTools(dir.path)] } : {}),
    env: { FAKE_PROVIDER_KEY: "fake-provider-key-0001" },
    config: {
      providers: {
        fake: {
          kind: opts.kind,
          base_url: server.url,
          model: "test-model",
          api_key_env: "FAKE_PROVIDER_KEY",
          max_retries: 1,
          ...opts.provider,
        },
      },
      provider: "fake",
      sessions_dir: sessionsDir,
      shipped_tools: false,
      ...opts.config,
    },
  });
  if (opts.tools) t.rt.registry = new Registry(opts.tools, () => {});
  if (opts.extraTools) {
    t.rt.registry = new Registry([...t.rt.registry.list(), ...opts.extraTools], () => {});
  }
  const agent = startAgent(t.rt, {});
  agent.session.append({ type: "user", text: opts.task });
  const events: Record<string, unknown>[] = [];
  const view = new TerminalView({
    json: true,
    out: (line) => events.push(JSON.parse(line)),
    info: () => {},
    fancy: false,
  });
  let reason: LoopRun["reason"];
  let error: Error | undefined;
  try {
    reason = await runAgent({
      rt: t.rt,
      provider: agent.provider,
      session: agent.session,
      system: agent.system,
      maxTurns: opts.maxTurns ?? 10,
      maxRetries: agent.maxRetries,
      maxTokens: agent.maxTokens,
      context: agent.context,
      view,
    });
  } catch (e) {
    reason = "error";
    error = e as Error;
  } finally {
    agent.session.close();
    view.close();
  }
  return {
    reason,
    error,
    events,
    requests: server.requests,
    session: agent.session,
    dir: dir.path,
    sessionsDir,
    async [Symbol.asyncDispose]() {
      if (shm) await Deno.remove(shm, { recursive: true });
      await server[Symbol.asyncDispose]();
      await t[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** The notes the person was shown. */
export function notes(run: LoopRun): string[] {
  return run.events.filter((e) => e.type === "note").map((e) => e.message as string);
}
