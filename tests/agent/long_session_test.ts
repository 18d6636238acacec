/**
 * A session that outlives its context window (SPEC S7.5): 200 turns, each with a 12 KB
 * tool result, in a 32k-token window, for both providers. It must finish, with pruning
 * and compactions recorded; every request must fit the window and pair each tool call
 * with its result; and consecutive requests must share a byte-identical prefix up to the
 * newest turn, except across a prune or a compaction. The scripted server counts a
 * request's tokens as its body's characters / 3.5 and refuses one that does not fit, as a
 * real server would.
 */
import assert from "node:assert/strict";
import { Session } from "../../lib/agent/session.ts";
import { SUMMARY_PROMPT } from "../../lib/agent/compact.ts";
import type { Received, Reply } from "./fake_provider.ts";
import { reply } from "./fake_provider.ts";
import { runLoop, sayingTool } from "./harness.ts";

const TURNS = 200;
const WINDOW = 32_768;
const RESULT = (n: string) => `result ${n}\n` + "x".repeat(99).concat("\n").repeat(120);

type Kind = "openai" | "anthropic";

function tokensOf(request: Received): number {
  return Math.ceil(request.body.length / 3.5);
}

/** A reply whose usage says `prompt` input tokens. */
function withUsage(kind: Kind, r: Reply, prompt: number): Reply {
  return {
    burst: true,
    sse: r.sse!.map((f) =>
      kind === "openai"
        ? f.replace('"prompt_tokens":10', `"prompt_tokens":${prompt}`)
        : f.replace('"input_tokens":12', `"input_tokens":${prompt}`)
    ),
  };
}

function lastUserText(request: Received): string {
  const messages = request.json.messages as Record<string, unknown>[];
  const last = messages.at(-1)!;
  if (typeof last.content === "string") return last.content;
  const blocks = (last.content ?? []) as Record<string, unknown>[];
  return blocks.map((b) => (b.type === "text" ? b.text : "") as string).join("");
}

function isSummaryRequest(_kind: Kind, r: Received): boolean {
  return lastUserText(r).startsWith(SUMMARY_PROMPT);
}

/** Checks that every tool call has its result right after it, and no result is orphaned. */
function assertPaired(kind: Kind, request: Received): void {
  const messages = request.json.messages as Record<string, unknown>[];
  if (kind === "openai") {
    let open = new Set<string>();
    for (const m of messages) {
      if (m.role === "tool") {
        assert.ok(open.delete(m.tool_call_id as string), `orphan result ${m.tool_call_id}`);
        continue;
      }
      assert.equal(open.size, 0, `calls without results: ${[...open]}`);
      const calls = (m.tool_calls ?? []) as { id: string }[];
      open = new Set(calls.map((c) => c.id));
    }
    return;
  }
  assert.equal(messages[0].role, "user");
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (i > 0) assert.notEqual(m.role, messages[i - 1].role, "roles alternate");
    const blocks = m.content as Record<string, unknown>[];
    const results = blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
    const previous = i > 0 ? (messages[i - 1].content as Record<string, unknown>[]) : [];
    const uses = previous.filter((b) => b.type === "tool_use").map((b) => b.id);
    if (m.role === "user") assert.deepEqual(results, uses, `results at message ${i}`);
  }
}

/** A request's parts as byte strings, `cache_control` left out (its place moves by design). */
function parts(r: Received): { fixed: string; messages: string[] } {
  const strip = (v: unknown) =>
    JSON.stringify(v, (k, value) => (k === "cache_control" ? undefined : value));
  return {
    fixed: strip({ system: r.json.system, tools: r.json.tools }),
    messages: (r.json.messages as unknown[]).map(strip),
  };
}

for (const kind of ["openai", "anthropic"] as const) {
  Deno.test({
    name: `loop (${kind}): 200 turns of 12 KB results in a 32k window finish, compacted`,
    sanitizeResources: false,
    fn: async () => {
      let turn = 0;
      let tooBig = 0;
      await using run = await runLoop({
        kind,
        task: "produce 200 results",
        maxTurns: TURNS + 5,
        fastSessions: true,
        provider: { context_window: WINDOW },
        tools: [sayingTool("produce", (args) => RESULT(args))],
        replies: (_i, request) => {
          const tokens = tokensOf(request);
          if (tokens > WINDOW) {
            tooBig++;
            return {
              status: 400,
              json: { error: { message: `prompt is too long: ${tokens} tokens > ${WINDOW}` } },
            };
          }
          if (isSummaryRequest(kind, request)) {
            return withUsage(kind, reply(kind, `Summary: produced results so far.`), tokens);
          }
          turn++;
          const r = turn <= TURNS
            ? reply(kind, "", [{ id: `call_${turn}`, name: "produce", args: { n: turn } }])
            : reply(kind, "All 200 produced.");
          return withUsage(kind, r, tokens);
        },
      });
      assert.equal(run.reason, "done", run.error?.message);
      assert.equal(tooBig, 0);
      const events = run.session.events;
      const prunes = events.filter((e) => e.type === "prune").length;
      const compactions = events.filter((e) => e.type === "compaction").length;
      assert.ok(prunes >= 1, `${prunes} prunes`);
      assert.ok(compactions >= 1, `${compactions} compactions`);
      const main = run.requests.filter((r) => !isSummaryRequest(kind, r));
      assert.equal(main.length, TURNS + 1);
      for (const r of run.requests) assertPaired(kind, r);
      // Consecutive requests share their prefix byte for byte up to the newest turn; only a
      // prune or a compaction between them may change it.
      let broken = 0;
      for (let i = 1; i < main.length; i++) {
        const a = parts(main[i - 1]);
        const b = parts(main[i]);
        assert.equal(a.fixed, b.fixed, `system and declarations of request ${i}`);
        const prefix = a.messages.every((m, j) => m === b.messages[j]);
        if (!prefix) broken++;
      }
      assert.ok(broken <= prunes + compactions, `${broken} breaks, ${prunes + compactions} steps`);
      // The transcript is valid: it reopens without a warning and gives the same messages.
      const warnings: string[] = [];
      const reopened = Session.open(
        run.sessionsDir,
        run.session.id,
        { maskText: (t: string) => t } as never,
        (w) => warnings.push(w),
      );
      assert.deepEqual(warnings, []);
      assert.deepEqual(reopened.messages(), run.session.messages());
      reopened.close();
    },
  });
}
