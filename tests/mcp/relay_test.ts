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
import { join } from "node:path";
import { REPO, tempDir } from "../helpers.ts";
import { maskedRelay } from "../../lib/pipeline/relay.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { maskedJson } from "../../lib/pipeline/attachments.ts";
import { everythingClient } from "./_serve.ts";

const SECRET = "tok-5e6f7a8b9c0d1e2f";
const connect = (home: string, capabilities: Record<string, unknown>) =>
  everythingClient(home, capabilities, { MY_SERVICE_TOKEN: SECRET, MY_IMAGE_TOKEN: IN_BASE64 });

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

/** server-everything's own image (the PNG its get-tiny-image tool returns), as base64. */
const TINY_IMAGE = Deno.readTextFileSync(
  join(REPO, "node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js"),
).match(/MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"/)![1];
/**
 * A credential whose text happens to be part of that base64 (not of the bytes it encodes):
 * masking the base64 as text would cut `$NAME` into it and break the image.
 */
const IN_BASE64 = TINY_IMAGE.slice(3000, 3024);

Deno.test({
  name:
    "a real image crosses magi mcp byte for byte; the relay masks an image's bytes, not its base64",
  fn: async () => {
    assert.ok(!atob(TINY_IMAGE).includes(IN_BASE64), "the credential is not in the bytes");
    await using home = await tempDir();
    const client = await connect(home.path, { sampling: {} });
    let image: { type: string; data: string; mimeType: string } | undefined;
    try {
      const result = await client.callTool({
        name: "everything__get-tiny-image",
        arguments: {},
      }) as CallToolResult;
      image = result.content.find((c) => c.type === "image") as typeof image;
    } finally {
      await client.close();
    }
    // magi mcp ran with both credentials in its environment (MY_SERVICE_TOKEN, and this one).
    assert.ok(image, "an image block");
    assert.ok(image.data === TINY_IMAGE, "the image crossed unchanged");

    // The same image through the sampling relay (either way), beside text with a secret.
    const masker = new Masker([
      { name: "MY_SERVICE_TOKEN", value: SECRET },
      { name: "MY_IMAGE_TOKEN", value: IN_BASE64 },
    ]);
    const bytes = new TextEncoder().encode(`GIF89a..${SECRET}..`);
    const holding = btoa(String.fromCharCode(...bytes));
    const masked = maskedJson({
      messages: [
        { role: "user", content: image },
        { role: "user", content: { type: "text", text: `see ${SECRET} and ${IN_BASE64}` } },
        { role: "user", content: { type: "image", data: holding, mimeType: "image/gif" } },
        { role: "user", content: { type: "audio", data: `not base64 ${SECRET}`, mimeType: "a/b" } },
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: `file:///${SECRET}`, blob: TINY_IMAGE, mimeType: "image/png" },
          },
        },
      ],
    }, masker) as { messages: { content: Record<string, unknown> }[] };
    const [same, text, secretBytes, broken, resource] = masked.messages.map((m) => m.content);
    assert.ok(same.data === TINY_IMAGE, "an image without a secret in its bytes passes whole");
    assert.equal(text.text, "see $MY_SERVICE_TOKEN and $MY_IMAGE_TOKEN", "text is masked");
    // A secret in an image's bytes is masked in the bytes; the base64 stays valid.
    assert.equal(atob(secretBytes.data as string), "GIF89a..$MY_SERVICE_TOKEN..");
    // What does not decode is no image: masked as text.
    assert.equal(broken.data, "not base64 $MY_SERVICE_TOKEN");
    const r = resource.resource as Record<string, string>;
    assert.ok(r.blob === TINY_IMAGE, "a blob without a secret in its bytes passes whole");
    assert.equal(r.uri, "file:///$MY_SERVICE_TOKEN");

    // The relay itself: a client's image answer reaches the server whole.
    const relay = maskedRelay({
      owner: {},
      sampling: () => Promise.resolve({ role: "assistant", content: image, model: "m" }),
    }, masker);
    const answer = await relay.sampling!({ messages: [] }, new AbortController().signal) as {
      content: { data: string };
    };
    assert.ok(answer.content.data === TINY_IMAGE, "the answer's image passes whole");
  },
});
