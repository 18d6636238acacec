/**
 * `magi mcp` passes an upstream MCP server's `sampling/createMessage` and `elicitation/create`
 * on to its own client, for what that client declared, masked both ways: the SDK's client
 * against `magi mcp` on stdio, which reaches `@modelcontextprotocol/server-everything`.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { tempDir } from "../helpers.ts";
import { maskedRelay } from "../../lib/pipeline/relay.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { everythingClient } from "./_serve.ts";

const SECRET = "tok-5e6f7a8b9c0d1e2f";
const connect = (home: string, capabilities: Record<string, unknown>) =>
  everythingClient(home, capabilities, { MY_SERVICE_TOKEN: SECRET });

const text = (r: CallToolResult) =>
  r.content.map((c) => c.type === "text" ? c.text : `[${c.type}]`).join("\n");

Deno.test({
  name: "magi mcp passes an upstream server's sampling request to its client, masked both ways",
  fn: async () => {
    await using home = await tempDir();
    const client = await connect(home.path, { sampling: {} });
    try {
      const asked: unknown[] = [];
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        asked.push(request.params);
        return {
          role: "assistant",
          content: { type: "text", text: `the client's model says ${SECRET}` },
          model: "client-model",
          stopReason: "endTurn",
        };
      });
      const result = await client.callTool({
        name: "everything__trigger-sampling-request",
        arguments: { prompt: `use ${SECRET}`, maxTokens: 40 },
      }) as CallToolResult;
      assert.equal(asked.length, 1, "the client was asked once");
      const params = asked[0] as { messages: unknown[]; systemPrompt: string; maxTokens: number };
      assert.equal(params.maxTokens, 40);
      assert.equal(params.systemPrompt, "You are a helpful test server.");
      assert.match(JSON.stringify(params.messages), /use \$MY_SERVICE_TOKEN/);
      assert.ok(!JSON.stringify(params).includes(SECRET), "the request is masked");
      assert.notEqual(result.isError, true, text(result));
      assert.match(text(result), /the client's model says \$MY_SERVICE_TOKEN/);
      assert.match(text(result), /client-model/);
      assert.ok(!JSON.stringify(result).includes(SECRET));
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name: "magi mcp passes an upstream server's form to its client whole, and its answer back",
  fn: async () => {
    await using home = await tempDir();
    const client = await connect(home.path, { elicitation: {} });
    try {
      let schema: { properties: Record<string, { type: string }> } | undefined;
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        schema = (request.params as { requestedSchema: typeof schema }).requestedSchema;
        return { action: "accept", content: { name: `Ada ${SECRET}`, check: true } };
      });
      const result = await client.callTool({
        name: "everything__trigger-elicitation-request",
        arguments: {},
      }) as CallToolResult;
      // The server's own form, all of its fields at once (not one question at a time).
      assert.ok(schema, "the client was asked");
      assert.ok(Object.keys(schema.properties).length > 3, JSON.stringify(schema));
      assert.equal(schema.properties.name.type, "string");
      assert.match(text(result), /User provided the requested information/);
      assert.match(text(result), /Ada \$MY_SERVICE_TOKEN/);
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name: "magi mcp refuses an upstream sampling request when its client did not declare sampling",
  fn: async () => {
    await using home = await tempDir();
    const client = await connect(home.path, {});
    try {
      // magi declares sampling upstream, so server-everything lists the tool; the call ends
      // with the refusal as its error result.
      const result = await client.callTool({
        name: "everything__trigger-sampling-request",
        arguments: { prompt: "hello", maxTokens: 10 },
      }) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(text(result), /refused: the MCP client did not declare sampling/);
    } finally {
      await client.close();
    }
  },
});

Deno.test("maskedRelay() masks the request before the client and the answer before the server", async () => {
  const masker = new Masker([{ name: "MY_SERVICE_TOKEN", value: SECRET }]);
  let seen: unknown;
  const relay = maskedRelay({
    owner: {},
    sampling: (params) => {
      seen = params;
      return Promise.resolve({ content: { type: "text", text: `back ${SECRET}` } });
    },
  }, masker);
  assert.equal(relay.elicitation, undefined, "only what the client declared");
  const answer = await relay.sampling!(
    { messages: [{ role: "user", content: { type: "text", text: SECRET } }] },
    new AbortController().signal,
  );
  assert.ok(!JSON.stringify(seen).includes(SECRET));
  assert.deepEqual(answer, { content: { type: "text", text: "back $MY_SERVICE_TOKEN" } });
});
