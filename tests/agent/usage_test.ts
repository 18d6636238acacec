/**
 * Usage as the providers report it: cached prompt tokens (OpenAI `prompt_tokens_details`,
 * llama.cpp `timings.cache_n`, Anthropic cache reads and writes) and reasoning tokens.
 */
import assert from "node:assert/strict";
import { AnthropicProvider } from "../../lib/agent/anthropic.ts";
import { OpenAIProvider } from "../../lib/agent/openai.ts";
import { anthropicReply, OA_DONE, oaChunk, scriptedServer } from "./fake_provider.ts";
import { recorded, STREAMS } from "./recorded.ts";

const settings = (url: string) => ({
  name: "fake",
  model: "test-model",
  baseURL: url,
  apiKey: "sk-test-key-123456",
  timeoutMs: 10_000,
  maxRetries: 0,
  maxTokens: 1000,
});

const ask = { system: "s", messages: [{ role: "user" as const, text: "hi" }], tools: [] };

function usageFrame(usage: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return `data: ${
    JSON.stringify({
      id: "x",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [],
      usage,
      ...extra,
    })
  }\n\n`;
}

Deno.test("openai: the recorded usage (openai-python 2018feb6….bin) and OpenAI's cached and reasoning details", async () => {
  await using server = scriptedServer("openai", [
    recorded(STREAMS.openaiToolCall),
    {
      sse: [
        oaChunk({ role: "assistant", content: "ok" }),
        oaChunk({}, "stop"),
        usageFrame({
          prompt_tokens: 2000,
          completion_tokens: 300,
          prompt_tokens_details: { cached_tokens: 1536 },
          completion_tokens_details: { reasoning_tokens: 256 },
        }),
        OA_DONE,
      ],
    },
  ]);
  const p = new OpenAIProvider(settings(server.url));
  const first = await p.turn(ask);
  assert.deepEqual(first.usage, { input_tokens: 44, output_tokens: 16 });
  assert.equal(first.tool_calls[0].name, "get_weather");
  const second = await p.turn(ask);
  assert.deepEqual(second.usage, {
    input_tokens: 2000,
    output_tokens: 300,
    cached_tokens: 1536,
    reasoning_tokens: 256,
  });
  assert.equal(server.requests[0].json.max_tokens, 1000);
});

Deno.test("openai: llama.cpp's timings.cache_n counts as cached tokens", async () => {
  await using server = scriptedServer("openai", [{
    sse: [
      oaChunk({ role: "assistant", content: "ok" }),
      oaChunk({}, "stop", { timings: { cache_n: 900, prompt_n: 100 } }),
      usageFrame({ prompt_tokens: 1000, completion_tokens: 5 }, {
        timings: { cache_n: 900, prompt_n: 100 },
      }),
      OA_DONE,
    ],
  }]);
  const result = await new OpenAIProvider(settings(server.url)).turn(ask);
  assert.deepEqual(result.usage, { input_tokens: 1000, output_tokens: 5, cached_tokens: 900 });
});

Deno.test("anthropic: the whole prompt counts cache reads and writes; the recorded basic_response.txt has none", async () => {
  const cached = anthropicReply("ok");
  cached.sse = cached.sse!.map((f) =>
    f.replace(
      '"usage":{"input_tokens":12,"output_tokens":1}',
      '"usage":{"input_tokens":12,"output_tokens":1,"cache_read_input_tokens":3000,"cache_creation_input_tokens":200}',
    )
  );
  await using server = scriptedServer("anthropic", [recorded(STREAMS.anthropicText), cached]);
  const p = new AnthropicProvider(settings(server.url));
  const first = await p.turn(ask);
  assert.equal(first.usage?.input_tokens, 11);
  assert.equal(first.usage?.cached_tokens, undefined);
  const second = await p.turn(ask);
  assert.deepEqual(second.usage, {
    input_tokens: 3212,
    output_tokens: 7,
    cached_tokens: 3000,
    cache_write_tokens: 200,
  });
});
