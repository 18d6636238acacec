/**
 * Context that lasts: a context-length error compacts once and retries once; summaries
 * are masked; `/compact [focus]` in chat; thinking blocks go back with their signatures;
 * the context window comes from config, the server (llama.cpp `/props`, Ollama
 * `/api/show`) or a known default.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SUMMARY_PROMPT } from "../../lib/agent/compact.ts";
import { askServerWindow } from "../../lib/agent/server_window.ts";
import { contextWindow, FALLBACK_WINDOW, knownWindow } from "../../lib/agent/window.ts";
import type { Provider } from "../../lib/agent/provider.ts";
import { magi, tempDir } from "../helpers.ts";
import { type Received, reply, scriptedServer } from "./fake_provider.ts";
import { notes, runLoop, sayingTool } from "./harness.ts";
import { recordedFrames, STREAMS } from "./recorded.ts";
import { agentConfig, makeTools, onlySession } from "./setup.ts";

const BIG = "line of output\n".repeat(400); // 6 KB

function isSummary(r: Received): boolean {
  const last = (r.json.messages as Record<string, unknown>[]).at(-1)!;
  const text = typeof last.content === "string"
    ? last.content
    : (last.content as { text?: string }[]).map((b) => b.text ?? "").join("");
  return text.startsWith(SUMMARY_PROMPT);
}

for (const kind of ["openai", "anthropic"] as const) {
  Deno.test(`loop (${kind}): a context-length error compacts once and sends the turn again`, async () => {
    let refused = 0;
    await using run = await runLoop({
      kind,
      task: "work",
      tools: [sayingTool("produce", () => BIG)],
      replies: (_i, request) => {
        if (isSummary(request)) return reply(kind, "Summary: three results were produced.");
        const turns = (request.json.messages as { role: string }[]).filter((m) =>
          m.role === "assistant"
        ).length;
        if (turns < 3) {
          return reply(kind, "", [{ id: `call_${turns + 1}`, name: "produce", args: {} }]);
        }
        if (refused === 0) {
          refused++;
          return kind === "openai"
            ? {
              status: 400,
              json: {
                error: {
                  message: "This model's maximum context length is 8192 tokens.",
                  type: "invalid_request_error",
                  code: "context_length_exceeded",
                },
              },
            }
            : {
              status: 400,
              json: {
                type: "error",
                error: {
                  type: "invalid_request_error",
                  message: "prompt is too long: 210000 tokens > 200000 maximum",
                },
              },
            };
        }
        return reply(kind, "Done.");
      },
    });
    assert.equal(run.reason, "done", run.error?.message);
    const compactions = run.session.events.filter((e) => e.type === "compaction");
    assert.equal(compactions.length, 1);
    assert.equal(compactions[0].type === "compaction" && compactions[0].trigger, "context_length");
    assert.ok(notes(run).some((n) => /compacted the conversation, sending it again/.test(n)));
    const last = run.requests.at(-1)!;
    const body = last.body;
    assert.match(body, /Summary: three results were produced\./);
    // Pruned first: the older results are cut to their head, the whole kept in a file.
    const pruned = join(run.session.dir, "spill", "pruned-call_1.txt");
    assert.equal(await Deno.readTextFile(pruned), BIG);
  });
}

Deno.test("loop: a second context-length error in a row is the run's error, not a loop", async () => {
  await using run = await runLoop({
    kind: "openai",
    task: "work",
    tools: [sayingTool("produce", () => BIG)],
    replies: (i, request) => {
      if (isSummary(request)) return reply("openai", "Summary.");
      if (i < 2) return reply("openai", "", [{ id: `call_${i + 1}`, name: "produce", args: {} }]);
      return {
        status: 400,
        json: {
          error: { message: "maximum context length exceeded", code: "context_length_exceeded" },
        },
      };
    },
  });
  assert.equal(run.reason, "error");
  assert.match(run.error!.message, /HTTP 400: maximum context length exceeded/);
  const refusals = run.requests.filter((r, i) => i >= 2 && !isSummary(r));
  assert.equal(refusals.length, 2);
});

Deno.test("loop: the summary is masked like every event", async () => {
  await using run = await runLoop({
    kind: "anthropic",
    task: "work",
    // Results too short to prune: only a summary brings the conversation back under 80 %.
    provider: { context_window: 2048 },
    tools: [sayingTool("produce", () => "y".repeat(1100))],
    replies: (i, request) => {
      if (isSummary(request)) {
        return reply("anthropic", "Summary: the key was fake-provider-key-0001.");
      }
      if (i < 8) return reply("anthropic", "", [{ id: `t${i}`, name: "produce", args: {} }]);
      return reply("anthropic", "Done.");
    },
  });
  assert.equal(run.reason, "done", run.error?.message);
  const transcript = await Deno.readTextFile(join(run.session.dir, "transcript.jsonl"));
  assert.match(transcript, /"type":"compaction"/);
  assert.ok(!transcript.includes("fake-provider-key-0001"));
  for (const r of run.requests) assert.ok(!r.body.includes("fake-provider-key-0001"));
});

Deno.test("loop (anthropic): thinking is asked for with its budget, and its blocks go back with their signatures before the tool results", async () => {
  // The thinking frames are those of anthropic-sdk-typescript
  // tests/fixtures/fable-fallback/stream-a-refusal.sse (block 0), followed by a tool_use
  // block and a tool_use stop in the reference shape.
  const recordedFramesList = recordedFrames(STREAMS.anthropicThinkingRefusal);
  const thinking = recordedFramesList.filter((f) =>
    /"index":0/.test(f) || f.includes("event: ping")
  );
  const tool = reply("anthropic", "", [{ id: "toolu_1", name: "produce", args: {} }]).sse!;
  const toolBlocks = tool.filter((f) => /"index":0/.test(f)).map((f) =>
    f.replace(/"index":0/g, '"index":1')
  );
  const start = recordedFramesList[0];
  const tail = tool.slice(-2);
  await using run = await runLoop({
    kind: "anthropic",
    task: "think, then act",
    provider: { thinking_budget: 2048, max_tokens: 1024 },
    tools: [sayingTool("produce", () => "made")],
    replies: [{ sse: [start, ...thinking, ...toolBlocks, ...tail] }, reply("anthropic", "Made.")],
  });
  assert.equal(run.reason, "done", run.error?.message);
  const first = run.requests[0].json;
  assert.deepEqual(first.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal(first.max_tokens, 2048 + 1024);
  const messages = run.requests[1].json.messages as {
    role: string;
    content: Record<string, unknown>[];
  }[];
  const assistant = messages[1];
  assert.equal(assistant.role, "assistant");
  assert.deepEqual(assistant.content.map((b) => b.type), ["thinking", "tool_use"]);
  assert.equal(
    assistant.content[0].signature,
    "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=",
  );
  assert.match(assistant.content[0].thinking as string, /^Simple educational question/);
  assert.ok(run.events.some((e) => e.type === "reasoning"));
});

Deno.test("magi chat: /compact FOCUS summarises the conversation with the focus", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", (_i, request) => {
    if (isSummary(request)) return reply("openai", "Summary: said hello twice.");
    return reply("openai", "Hello.");
  });
  const config = await agentConfig(dir.path, "openai", server.url);
  const r = await magi(["chat", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: { FAKE_PROVIDER_KEY: "fake-provider-key-0001" },
    stdin: "hi\nhi again\n/compact the greetings\nand now?\n/exit\n",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /magi: compacted the conversation: about \d+ → \d+ tokens/);
  const summary = server.requests.find(isSummary)!;
  const ask = (summary.json.messages as { content: string }[]).at(-1)!.content;
  assert.match(ask, /Focus the summary on: the greetings$/);
  const last = server.requests.at(-1)!.json.messages as { role: string; content: string }[];
  // The summary stands for all but the newest answer, which is kept whole.
  assert.deepEqual(last.map((m) => m.role), ["system", "user", "assistant", "user"]);
  assert.match(last[1].content, /^\[magi: the earlier part of this conversation was summarised/);
  assert.match(last[1].content, /Summary: said hello twice\.$/);
  const transcript = await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl"));
  assert.match(transcript, /"type":"compaction".*"trigger":"command","focus":"the greetings"/);
});

Deno.test("context window: config, then llama.cpp /props or Ollama /api/show, then a known default", async () => {
  const seen: string[] = [];
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      seen.push(`${req.method} ${path}`);
      if (path === "/props") {
        return Response.json({
          default_generation_settings: { n_ctx: 16384 },
        });
      }
      if (path === "/api/show") {
        const body = await req.json();
        return Response.json({
          parameters: body.model === "tuned"
            ? 'num_ctx                        12288\nstop "<|im_end|>"'
            : "",
          model_info: { "qwen3.context_length": 40960 },
        });
      }
      return new Response("no", { status: 404 });
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}/v1`;
  const settings = { name: "x", baseURL: base, timeoutMs: 1000, maxRetries: 0, maxTokens: 10 };
  assert.equal(await askServerWindow({ ...settings, model: "m", server: "llamacpp" }), 16384);
  assert.equal(await askServerWindow({ ...settings, model: "tuned", server: "ollama" }), 12288);
  // Ollama without num_ctx runs the model at its default of 4096, whatever it was trained for.
  assert.equal(await askServerWindow({ ...settings, model: "qwen3", server: "ollama" }), 4096);
  assert.equal(await askServerWindow({ ...settings, model: "m" }), undefined);
  assert.deepEqual(seen, ["GET /props", "POST /api/show", "POST /api/show"]);
  const fake = (model: string, window?: number): Provider => ({
    name: "p",
    model,
    turn: () => Promise.reject(new Error("unused")),
    serverWindow: () => Promise.resolve(window),
  });
  assert.equal(await contextWindow(fake("claude-sonnet-4-5", 9000), 50_000), 50_000);
  assert.equal(await contextWindow(fake("claude-sonnet-4-5", 9000)), 9000);
  assert.equal(await contextWindow(fake("claude-sonnet-4-5")), 200_000);
  assert.equal(await contextWindow(fake("mystery")), FALLBACK_WINDOW);
  assert.equal(knownWindow("gpt-4o-mini"), 128_000);
});
