/**
 * Every outcome told (SPEC S7.5): a refusal, a max_tokens cut, a reasoning-only turn and
 * an error event in mid-stream each end with one line and their own exit status.
 * Replayed recordings are named per test (tests/agent/recorded.ts); where none exists the
 * frames follow the server's documented shape and the test says so.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";
import { OA_DONE, oaChunk, oaUsage, reply, scriptedServer } from "./fake_provider.ts";
import { notes, runLoop } from "./harness.ts";
import { recorded, STREAMS } from "./recorded.ts";
import { agentConfig, onlySession } from "./setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

async function magiRun(
  kind: "openai" | "anthropic",
  replies: Parameters<typeof scriptedServer>[1],
  extra = {},
) {
  const dir = await tempDir();
  const server = scriptedServer(kind, replies);
  const config = await agentConfig(dir.path, kind, server.url, extra);
  const run = await magi(["run", "do it", "--config", config], { cwd: dir.path, env: ENV });
  const transcript = (await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl")))
    .trim().split("\n").map((l) => JSON.parse(l));
  return {
    run,
    transcript,
    requests: server.requests,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

Deno.test({
  name: "magi run (openai): a streamed refusal is told, with exit status 4",
  sanitizeResources: false,
  fn: async () => {
    // Replays openai-python .inline-snapshot/external/173417d5….bin.
    await using r = await magiRun("openai", [recorded(STREAMS.openaiRefusal)]);
    assert.equal(r.run.code, 4, r.run.stderr);
    assert.match(
      r.run.stderr,
      /magi: the model refused to answer \(stop reason "stop"\): I'm sorry, I can't assist with that request\./,
    );
    const answer = r.transcript.find((e) => e.type === "assistant");
    assert.equal(answer.stop, "stop");
    assert.equal(r.transcript.at(-1).reason, "refused");
    // max_tokens is sent to an OpenAI-compatible server too.
    assert.equal(r.requests[0].json.max_tokens, 8192);
  },
});

Deno.test({
  name: "magi run (openai): a length cut is told, with exit status 5",
  sanitizeResources: false,
  fn: async () => {
    // Replays openai-python .inline-snapshot/external/4cc50a61….bin.
    await using r = await magiRun("openai", [recorded(STREAMS.openaiLength)]);
    assert.equal(r.run.code, 5, r.run.stderr);
    assert.match(
      r.run.stderr,
      /magi: the answer was cut at the max_tokens limit of 8192 tokens \(stop reason "length"\)/,
    );
    assert.equal(r.run.stdout, '{"\n');
    const usage = r.transcript.find((e) => e.type === "usage");
    assert.equal(usage.input_tokens, 79);
    assert.equal(usage.output_tokens, 1);
    assert.ok(usage.estimated_tokens > 0);
  },
});

Deno.test({
  name:
    "magi run (anthropic): a refusal after thinking is told (exit 4); the thinking is kept, dimmed, not on stdout",
  sanitizeResources: false,
  fn: async () => {
    // Replays anthropic-sdk-typescript tests/fixtures/fable-fallback/stream-a-refusal.sse.
    await using r = await magiRun("anthropic", [recorded(STREAMS.anthropicThinkingRefusal)]);
    assert.equal(r.run.code, 4, r.run.stderr);
    assert.match(r.run.stderr, /magi: the model refused to answer \(stop reason "refusal"\): Hi/);
    assert.match(r.run.stderr, /Simple educational question about what a solar eclipse is/);
    assert.equal(r.run.stdout, "Hi\n");
    const answer = r.transcript.find((e) => e.type === "assistant");
    assert.equal(answer.thinking.length, 1);
    assert.equal(answer.thinking[0].type, "thinking");
    assert.equal(
      answer.thinking[0].signature,
      "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=",
    );
    assert.match(answer.reasoning, /^Simple educational question/);
    const usage = r.transcript.find((e) => e.type === "usage");
    assert.equal(usage.reasoning_tokens, 67);
    assert.equal(usage.output_tokens, 106);
  },
});

Deno.test({
  name: "magi run (openai): a turn of reasoning_content with no answer is told, with exit status 6",
  sanitizeResources: false,
  fn: async () => {
    // No recording of llama.cpp's reasoning_content: frames in the shape llama.cpp sends.
    await using r = await magiRun("openai", [{
      sse: [
        oaChunk({ role: "assistant", content: null }),
        oaChunk({ reasoning_content: "The user wants X. " }),
        oaChunk({ reasoning_content: "I should think more." }),
        oaChunk({}, "stop"),
        oaUsage(),
        OA_DONE,
      ],
    }]);
    assert.equal(r.run.code, 6, r.run.stderr);
    assert.match(r.run.stderr, /The user wants X\. I should think more\./);
    assert.match(r.run.stderr, /magi: the model reasoned \(38 characters\) but gave no answer/);
    assert.equal(r.run.stdout, "");
    assert.equal(r.transcript.at(-1).reason, "no_answer");
  },
});

Deno.test("loop (openai): Ollama's reasoning is shown apart and never sent back as said", async () => {
  // No recording of Ollama's `reasoning` field: frames in the shape Ollama's /v1 sends.
  await using run = await runLoop({
    kind: "openai",
    task: "hi",
    replies: [
      {
        sse: [
          oaChunk({ role: "assistant", content: "", reasoning: "Thinking about hi." }),
          oaChunk({ content: "Hello." }),
          oaChunk({}, "stop"),
          oaUsage(),
          OA_DONE,
        ],
      },
    ],
  });
  assert.equal(run.reason, "done");
  assert.deepEqual(run.events.filter((e) => e.type === "reasoning").map((e) => e.text), [
    "Thinking about hi.",
  ]);
  assert.equal(run.events.find((e) => e.type === "text")?.text, "Hello.");
});

Deno.test("loop (openai): vLLM's error object in mid-stream is a provider error saying so", async () => {
  // vLLM's mid-stream error shape: {"object": "error", "message", "type", "code"}.
  const vllm = `data: ${
    JSON.stringify({
      object: "error",
      message: "The decoder prompt is longer than the maximum model length of 4096.",
      type: "BadRequestError",
      param: null,
      code: 400,
    })
  }\n\n`;
  await using run = await runLoop({
    kind: "openai",
    task: "hi",
    replies: [{ sse: [oaChunk({ role: "assistant", content: "" }), vllm] }],
    provider: { context_window: 4096 },
  });
  // It says the prompt is too long, but there is nothing to compact: no retry.
  assert.equal(run.reason, "error");
  assert.match(
    run.error!.message,
    /^provider "fake": the stream reported an error: The decoder prompt is longer than the maximum model length of 4096\.$/,
  );
  assert.equal(run.requests.length, 1);
});

Deno.test("loop (openai): OpenRouter's error in mid-stream is a provider error saying so", async () => {
  // OpenRouter's documented mid-stream error: a chunk with `error` and finish_reason "error".
  const frame = `data: ${
    JSON.stringify({
      id: "gen-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      error: { code: "server_error", message: "Provider disconnected" },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    })
  }\n\n`;
  await using run = await runLoop({
    kind: "openai",
    task: "hi",
    replies: [{ sse: [oaChunk({ role: "assistant", content: "Par" }), frame] }],
  });
  assert.equal(run.reason, "error");
  assert.equal(
    run.error!.message,
    'provider "fake": the stream reported an error: Provider disconnected',
  );
  assert.equal(run.requests.length, 1);
});

Deno.test("loop (anthropic): a max_tokens cut with a tool call runs no tool and is told", async () => {
  const cut = reply("anthropic", "Let me", [{ id: "toolu_1", name: "say", args: { n: 1 } }]);
  cut.sse = cut.sse!.map((f) =>
    f.replace('"stop_reason":"tool_use"', '"stop_reason":"max_tokens"')
  );
  let ran = 0;
  await using run = await runLoop({
    kind: "anthropic",
    task: "hi",
    replies: [cut],
    tools: [{
      declaration: { name: "say", description: "say", parameters: { type: "object" } },
      origin: { source: "tools_dir", where: "test" },
      invoke() {
        ran++;
        return Promise.resolve({ isError: false });
      },
    }],
    provider: { max_tokens: 64 },
  });
  assert.equal(run.reason, "cut");
  assert.equal(ran, 0);
  assert.deepEqual(notes(run), [
    'magi: the answer was cut at the max_tokens limit of 64 tokens (stop reason "max_tokens"); ' +
    "its 1 tool call(s) were not run; raise providers.NAME.max_tokens to allow longer answers",
  ]);
  assert.equal(run.requests[0].json.max_tokens, 64);
});
