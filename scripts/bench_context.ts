/**
 * Context figures for `deno task bench`: a replayed 100-turn session — each turn one tool
 * call whose result is 12 KB — run through the real loop, session and compaction against
 * an in-process provider that records each request as the OpenAI-compatible provider
 * would send its `messages` and `tools`. Measured: the tokens sent over the session
 * (request characters / 3.5, the meter's rule) with pruning and compaction in a 32k-token
 * window, against the same session with a window too large ever to compact; and the share
 * of each request's bytes that repeat the previous request's, byte for byte, from the
 * start (what an automatic prefix cache can reuse).
 *
 * Alone: `deno run -A scripts/bench_context.ts`.
 *
 * @module
 */
import { join } from "node:path";
import { runAgent } from "../lib/agent/loop.ts";
import { openaiMessages } from "../lib/agent/openai.ts";
import type { Provider, TurnRequest, TurnResult } from "../lib/agent/provider.ts";
import { Session } from "../lib/agent/session.ts";
import { SUMMARY_PROMPT } from "../lib/agent/compact.ts";
import { Registry } from "../lib/registry/registry.ts";
import type { Tool } from "../lib/core/types.ts";
import { createRuntime } from "../lib/runtime/runtime.ts";
import { benchEnv } from "./bench_env.ts";

const TURNS = 100;
const RESULT_BYTES = 12 * 1024;

/** What one replayed session sent. */
export interface ContextRun {
  /** Estimated tokens sent over all requests, summaries included. */
  tokens: number;
  /** Share of request bytes that repeat the previous request's prefix (0 to 1). */
  reuse: number;
  requests: number;
  compactions: number;
}

class ReplayProvider implements Provider {
  readonly name = "replay";
  readonly model = "replay-model";
  readonly bodies: string[] = [];
  #turn = 0;

  turn(request: TurnRequest): Promise<TurnResult> {
    const body = JSON.stringify({
      messages: openaiMessages(request.system, request.messages, (n) => n),
      tools: request.tools,
    });
    this.bodies.push(body);
    const input_tokens = Math.ceil(body.length / 3.5);
    const usage = { input_tokens, output_tokens: 20 };
    const last = request.messages.at(-1);
    if (last?.role === "user" && last.text.startsWith(SUMMARY_PROMPT)) {
      return Promise.resolve({
        text: "Summary: results 1 to N produced.",
        tool_calls: [],
        usage,
        stop: "stop",
      });
    }
    this.#turn++;
    if (this.#turn > TURNS) {
      return Promise.resolve({ text: "All done.", tool_calls: [], usage, stop: "stop" });
    }
    return Promise.resolve({
      text: "",
      tool_calls: [{ id: `call_${this.#turn}`, name: "produce", arguments: `{"n":${this.#turn}}` }],
      usage,
      stop: "tool_calls",
    });
  }
}

const produce: Tool = {
  declaration: {
    name: "produce",
    description: "produce a result",
    parameters: { type: "object", properties: { n: { type: "number" } } },
  },
  origin: { source: "tools_dir", where: "bench" },
  async invoke(call) {
    const line = `result ${JSON.stringify(call.args)} `.padEnd(99, "x") + "\n";
    await call.emit.said(line.repeat(Math.ceil(RESULT_BYTES / line.length)));
    return { isError: false };
  },
};

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Replays the session once with a `window`-token context window. */
export async function replaySession(window: number): Promise<ContextRun> {
  const { home, env } = await benchEnv("magi-bench-context-");
  try {
    const rt = await createRuntime({ cwd: home, env, warn: () => {} });
    rt.registry = new Registry([produce], () => {});
    const provider = new ReplayProvider();
    const session = Session.create(join(home, "sessions"), rt.masker, {
      cwd: home,
      provider: provider.name,
      model: provider.model,
    });
    rt.spillDir = join(session.dir, "spill");
    session.append({ type: "user", text: "produce 100 results" });
    const reason = await runAgent({
      rt,
      provider,
      session,
      system: "You are a benchmark.",
      maxTurns: TURNS + 5,
      maxRetries: 0,
      context: { window },
      view: {
        text() {},
        answer() {},
        toolCall() {},
        toolResult() {},
        usage() {},
        retry() {},
        restart() {},
      },
    });
    session.close();
    if (reason !== "done") throw new Error(`the replayed session ended with "${reason}"`);
    const bodies = provider.bodies;
    let reused = 0;
    let total = 0;
    for (let i = 1; i < bodies.length; i++) {
      // The JSON closes its arrays after the newest message: compare up to there.
      reused += commonPrefix(bodies[i - 1], bodies[i]);
      total += bodies[i].length;
    }
    return {
      tokens: bodies.reduce((n, b) => n + Math.ceil(b.length / 3.5), 0),
      reuse: total === 0 ? 0 : reused / total,
      requests: bodies.length,
      compactions: session.events.filter((e) => e.type === "compaction" || e.type === "prune")
        .length,
    };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** Both runs: with pruning and compaction (32k window) and without (a window never reached). */
export async function contextFigures(): Promise<{ kept: ContextRun; whole: ContextRun }> {
  return { kept: await replaySession(32_768), whole: await replaySession(1_000_000_000) };
}

if (import.meta.main) {
  const { kept, whole } = await contextFigures();
  const row = (what: string, r: ContextRun) =>
    console.log(
      `| ${what} | ${r.requests} | ${r.compactions} | ${r.tokens} | ${
        (r.reuse * 100).toFixed(1)
      } % |`,
    );
  console.log(
    "| 100 turns, 12 KB results | requests | prunes + compactions | tokens sent | prefix reused |",
  );
  console.log("| --- | --- | --- | --- | --- |");
  row("pruning and compaction, 32k window", kept);
  row("neither (the whole transcript every time)", whole);
}
