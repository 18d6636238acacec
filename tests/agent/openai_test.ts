import assert from "node:assert/strict";
import { OpenAIProvider } from "../../lib/agent/openai.ts";
import { type TurnRequest, turnWithRetries } from "../../lib/agent/provider.ts";
import {
  OA_DONE,
  oaChunk,
  oaUsage,
  openaiReply,
  type Reply,
  scriptedServer,
} from "./fake_provider.ts";

const TOOLS = [
  {
    name: "echo",
    description: "Echo",
    parameters: { type: "object", properties: { text: { type: "string" } } },
  },
];

function provider(url: string, timeoutMs = 10_000): OpenAIProvider {
  return new OpenAIProvider({
    name: "fake",
    model: "test-model",
    baseURL: url,
    apiKey: "sk-test-key-123456",
    timeoutMs,
    maxRetries: 2,
    maxTokens: 1000,
  });
}

const REQUEST: TurnRequest = {
  system: "sys",
  messages: [{ role: "user", text: "go" }],
  tools: TOOLS,
};

async function turnWith(reply: Reply) {
  await using server = scriptedServer("openai", [reply]);
  return await provider(server.url).turn(REQUEST);
}

Deno.test("openai: a reference stream gives text and tool calls in order", async () => {
  await using server = scriptedServer("openai", [
    openaiReply("Let me look.", [
      { id: "call_a", name: "echo", args: { text: "one" } },
      { id: "call_b", name: "echo", args: { text: "two" } },
    ]),
  ]);
  const streamed: string[] = [];
  const result = await provider(server.url).turn({ ...REQUEST, onText: (t) => streamed.push(t) });
  assert.equal(result.text, "Let me look.");
  assert.equal(streamed.join(""), "Let me look.");
  assert.deepEqual(result.tool_calls, [
    { id: "call_a", name: "echo", arguments: '{"text":"one"}' },
    { id: "call_b", name: "echo", arguments: '{"text":"two"}' },
  ]);
  assert.deepEqual(result.usage, { input_tokens: 10, output_tokens: 5 });
  const body = server.requests[0].json;
  assert.equal(body.stream, true);
  assert.deepEqual((body.messages as unknown[])[0], { role: "system", content: "sys" });
  assert.equal(server.requests[0].headers.authorization, "Bearer sk-test-key-123456");
  assert.ok(!("strict" in (body.tools as { function: object }[])[0].function));
  assert.ok(!("parallel_tool_calls" in body), "not sent unless configured");
});

Deno.test("openai quirk: the whole call, arguments complete, in the first chunk", async () => {
  const result = await turnWith({
    sse: [
      oaChunk({
        role: "assistant",
        tool_calls: [{
          index: 0,
          id: "call_1",
          type: "function",
          function: { name: "echo", arguments: '{"text":"whole"}' },
        }],
      }),
      oaChunk({}, "tool_calls"),
      OA_DONE,
    ],
  });
  assert.deepEqual(result.tool_calls, [
    { id: "call_1", name: "echo", arguments: '{"text":"whole"}' },
  ]);
});

Deno.test("openai quirk: arguments as an object instead of a string", async () => {
  const result = await turnWith({
    sse: [
      oaChunk({
        tool_calls: [{
          index: 0,
          id: "call_1",
          function: { name: "echo", arguments: { text: "obj" } },
        }],
      }),
      oaChunk({}, "tool_calls"),
      OA_DONE,
    ],
  });
  assert.equal(result.tool_calls.length, 1);
  assert.deepEqual(JSON.parse(result.tool_calls[0].arguments), { text: "obj" });
});

Deno.test("openai quirk: a missing index (fragments join the call they follow)", async () => {
  const result = await turnWith({
    sse: [
      oaChunk({ tool_calls: [{ id: "call_x", function: { name: "echo", arguments: "" } }] }),
      oaChunk({ tool_calls: [{ function: { arguments: '{"text":' } }] }),
      oaChunk({ tool_calls: [{ function: { arguments: '"a"}' } }] }),
      oaChunk({
        tool_calls: [{ id: "call_y", function: { name: "echo", arguments: '{"text":"b"}' } }],
      }),
      oaChunk({}, "tool_calls"),
      OA_DONE,
    ],
  });
  assert.deepEqual(result.tool_calls, [
    { id: "call_x", name: "echo", arguments: '{"text":"a"}' },
    { id: "call_y", name: "echo", arguments: '{"text":"b"}' },
  ]);
});

Deno.test("openai quirk: a repeated index with a new id starts a new call", async () => {
  const result = await turnWith({
    sse: [
      oaChunk({
        tool_calls: [{
          index: 0,
          id: "call_1",
          function: { name: "echo", arguments: '{"text":"1"}' },
        }],
      }),
      oaChunk({
        tool_calls: [{ index: 0, id: "call_2", function: { name: "echo", arguments: '{"text":' } }],
      }),
      oaChunk({ tool_calls: [{ index: 0, function: { arguments: '"2"}' } }] }),
      oaChunk({}, "tool_calls"),
      OA_DONE,
    ],
  });
  assert.deepEqual(result.tool_calls, [
    { id: "call_1", name: "echo", arguments: '{"text":"1"}' },
    { id: "call_2", name: "echo", arguments: '{"text":"2"}' },
  ]);
});

Deno.test('openai quirk: finish_reason "stop" with tool calls present still runs them', async () => {
  const result = await turnWith({
    sse: [
      oaChunk({
        tool_calls: [{ index: 0, id: "call_1", function: { name: "echo", arguments: "{}" } }],
      }),
      oaChunk({}, "stop"),
      OA_DONE,
    ],
  });
  assert.equal(result.stop, "stop");
  assert.deepEqual(result.tool_calls, [{ id: "call_1", name: "echo", arguments: "{}" }]);
});

Deno.test("openai quirk: no [DONE] at the end of the stream", async () => {
  const result = await turnWith({
    sse: [oaChunk({ content: "fine" }), oaChunk({}, "stop"), oaUsage(3, 1)],
  });
  assert.equal(result.text, "fine");
  assert.deepEqual(result.tool_calls, []);
  assert.deepEqual(result.usage, { input_tokens: 3, output_tokens: 1 });
});

Deno.test("openai: a 429 is retried and the turn then succeeds", async () => {
  await using server = scriptedServer("openai", [
    {
      status: 429,
      headers: { "retry-after-ms": "10" },
      json: { error: { message: "rate limited", type: "rate_limit" } },
    },
    openaiReply("after the wait"),
  ]);
  const result = await provider(server.url).turn(REQUEST);
  assert.equal(result.text, "after the wait");
  assert.equal(server.requests.length, 2);
});

Deno.test("openai: a refusal past the retries is a provider error naming the status", async () => {
  await using server = scriptedServer("openai", () => ({
    status: 401,
    json: { error: { message: "bad key" } },
  }));
  await assert.rejects(() => provider(server.url).turn(REQUEST), (error: Error) => {
    assert.equal(error.name, "ProviderError");
    assert.match(error.message, /provider "fake": HTTP 401: bad key/);
    return true;
  });
});

Deno.test("openai: a stream that stalls past the time limit is cut and sent again", async () => {
  await using server = scriptedServer("openai", [
    { sse: [oaChunk({ content: "thinking" })], stall: true },
    openaiReply("done at last"),
  ]);
  const retries: string[] = [];
  const result = await turnWithRetries(
    provider(server.url, 300),
    REQUEST,
    2,
    (m) => retries.push(m),
    1,
  );
  assert.equal(result.text, "done at last");
  assert.equal(server.requests.length, 2);
  assert.deepEqual(retries, ['provider "fake": no data for 0.3 s; retrying (2/3)']);
});

Deno.test("openai quirk: no id, no index and no arguments still make one call", async () => {
  const result = await turnWith({
    sse: [oaChunk({ tool_calls: [{ function: { name: "echo" } }] }), oaChunk({}, "tool_calls")],
  });
  assert.deepEqual(result.tool_calls, [{ id: "call_1", name: "echo", arguments: "{}" }]);
});
