import assert from "node:assert/strict";
import { AnthropicProvider } from "../../lib/agent/anthropic.ts";
import { anthropicReply, PING, scriptedServer } from "./fake_provider.ts";

function provider(url: string) {
  return new AnthropicProvider({
    name: "claude",
    model: "test-model",
    baseURL: url,
    apiKey: "sk-ant-test-123456",
    timeoutMs: 10_000,
    maxRetries: 2,
    maxTokens: 1000,
  });
}

Deno.test("anthropic: text and tool_use blocks with input_json_delta fragments and pings", async () => {
  const script = anthropicReply("Reading both.", [
    { id: "toolu_a", name: "read", args: { path: "a.txt" } },
    { id: "toolu_b", name: "read", args: { path: "b.txt" } },
  ]);
  script.sse = [PING, ...script.sse!, PING];
  await using server = scriptedServer("anthropic", [script]);
  const streamed: string[] = [];
  const result = await provider(server.url).turn({
    system: "be brief",
    messages: [
      { role: "user", text: "read" },
      {
        role: "assistant",
        text: "",
        tool_calls: [{ id: "toolu_0", name: "read", arguments: "{}" }],
      },
      { role: "tool", result: { id: "toolu_0", name: "read", said: "no path", is_error: true } },
    ],
    tools: [{
      name: "read",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    }],
    onText: (t) => streamed.push(t),
  });
  assert.equal(result.text, "Reading both.");
  assert.equal(streamed.join(""), "Reading both.");
  assert.equal(result.stop, "tool_use");
  assert.deepEqual(result.tool_calls, [
    { id: "toolu_a", name: "read", arguments: '{"path":"a.txt"}' },
    { id: "toolu_b", name: "read", arguments: '{"path":"b.txt"}' },
  ]);
  assert.deepEqual(result.usage, { input_tokens: 12, output_tokens: 7 });
  const req = server.requests[0];
  assert.equal(req.path, "/v1/messages");
  // The SDK chooses the header (x-api-key in older versions, a bearer token in this one).
  const auth = req.headers["x-api-key"] ?? req.headers.authorization?.replace(/^Bearer /, "");
  assert.equal(auth, "sk-ant-test-123456");
  // Prompt caching: breakpoints on the declarations, the system prompt and the two newest
  // user turns (four, Anthropic's limit).
  const ephemeral = { type: "ephemeral" };
  assert.deepEqual(req.json.system, [
    { type: "text", text: "be brief", cache_control: ephemeral },
  ]);
  assert.equal(req.json.stream, true);
  assert.equal(req.json.max_tokens, 1000);
  assert.deepEqual(req.json.tools, [{
    name: "read",
    description: "Read a file",
    input_schema: { type: "object", properties: { path: { type: "string" } } },
    cache_control: ephemeral,
  }]);
  assert.deepEqual((req.json.messages as unknown[])[0], {
    role: "user",
    content: [{ type: "text", text: "read", cache_control: ephemeral }],
  });
  assert.deepEqual((req.json.messages as unknown[])[2], {
    role: "user",
    content: [{
      type: "tool_result",
      tool_use_id: "toolu_0",
      content: "no path",
      is_error: true,
      cache_control: ephemeral,
    }],
  });
});

Deno.test("anthropic: a 429 and a 529 are retried and the turn then succeeds", async () => {
  await using server = scriptedServer("anthropic", [
    {
      status: 429,
      headers: { "retry-after-ms": "10" },
      json: { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
    },
    {
      status: 529,
      headers: { "retry-after-ms": "10" },
      json: { type: "error", error: { type: "overloaded_error", message: "overloaded" } },
    },
    anthropicReply("third time lucky"),
  ]);
  const result = await provider(server.url).turn({
    system: "",
    messages: [{ role: "user", text: "hi" }],
    tools: [],
  });
  assert.equal(result.text, "third time lucky");
  assert.equal(server.requests.length, 3);
  assert.ok(!("tools" in server.requests[2].json));
});

Deno.test("anthropic: an overloaded_error event mid-stream is tried again; an invalid_request_error is not", async () => {
  const { turnWithRetries } = await import("../../lib/agent/provider.ts");
  const errorEvent = (type: string) =>
    `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message: type } })}\n\n`;
  const full = anthropicReply("All done here.");
  const broken = { sse: [...full.sse!.slice(0, 4), errorEvent("overloaded_error")] };
  await using server = scriptedServer("anthropic", [broken, full]);
  const retries: string[] = [];
  const result = await turnWithRetries(
    provider(server.url),
    { system: "", messages: [{ role: "user", text: "hi" }], tools: [] },
    2,
    (m) => retries.push(m),
    1,
  );
  assert.equal(result.text, "All done here.");
  assert.equal(server.requests.length, 2);
  assert.match(retries[0], /the stream reported overloaded_error; retrying \(2\/3\)/);

  const refused = { sse: [...full.sse!.slice(0, 4), errorEvent("invalid_request_error")] };
  await using strict = scriptedServer("anthropic", [refused, full]);
  await assert.rejects(
    () =>
      turnWithRetries(
        provider(strict.url),
        { system: "", messages: [{ role: "user", text: "hi" }], tools: [] },
        2,
        () => {},
        1,
      ),
    /invalid_request_error/,
  );
  assert.equal(strict.requests.length, 1);
});
