/**
 * Resource subscriptions through `magi mcp`: the SDK's client subscribes to a resource of
 * `@modelcontextprotocol/server-everything` (which magi reaches), the server's
 * `notifications/resources/updated` come back through magi, and unsubscribing stops them.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { tempDir } from "../helpers.ts";
import { everythingClient } from "./_serve.ts";
import { FIXTURE } from "./servers.ts";

Deno.test("magi mcp passes resources/subscribe upstream and the updates back", async () => {
  await using home = await tempDir();
  const client = await everythingClient(home.path, {});
  try {
    assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
    const { resources } = await client.listResources();
    const uri = resources.find((r) => r.uri.startsWith("demo://resource/static/"))!.uri;
    const updates: string[] = [];
    let heard = Promise.withResolvers<void>();
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      heard.resolve();
    });
    await client.subscribeResource({ uri });
    // Subscribing twice is one subscription.
    await client.subscribeResource({ uri });
    // server-everything sends an update at once for each URI subscribed, then every 5 s.
    await client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    await heard.promise;
    assert.deepEqual(updates, [uri]);

    await client.unsubscribeResource({ uri });
    heard = Promise.withResolvers<void>();
    // Toggled off and on again: an immediate update for each URI still subscribed — none.
    await client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    await client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    // A round trip after the toggle: any update it sent has arrived before this answer.
    await client.ping();
    assert.deepEqual(updates, [uri], "no update after unsubscribing");
    await client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
  } finally {
    await client.close();
  }
});

Deno.test("magi mcp without MCP servers declares no subscriptions", async () => {
  await using home = await tempDir();
  const client = await everythingClient(home.path, {}, {}, { mcp_servers: {} });
  try {
    assert.notEqual(client.getServerCapabilities()?.resources?.subscribe, true);
    await assert.rejects(
      client.subscribeResource({ uri: "demo://x" }),
      (e: unknown) => e instanceof McpError,
    );
  } finally {
    await client.close();
  }
});

Deno.test("a watched server started again after a crash is subscribed again", async () => {
  await using home = await tempDir();
  // The fixture server watches in its own process only: a new one knows no subscription.
  const client = await everythingClient(home.path, {}, {}, {
    mcp_servers: { fixture: { ...FIXTURE, env: { FIXTURE_RESOURCES: "1" }, start: "eager" } },
    policy: { rules: [{ tool: "fixture__*", source: "mcp", decision: "allow" }] },
  });
  const text = (r: CallToolResult) =>
    r.content.map((c) => c.type === "text" ? c.text : "").join("");
  const touch = async () =>
    text(await client.callTool({ name: "fixture__touch", arguments: {} }) as CallToolResult);
  try {
    const uri = "fixture://watched";
    let heard = Promise.withResolvers<string>();
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      heard.resolve(n.params.uri);
    });
    await client.subscribeResource({ uri });
    assert.match(await touch(), /touched 1/);
    assert.equal(await heard.promise, uri);

    const crashed = await client.callTool({ name: "fixture__crash", arguments: {} });
    assert.equal(crashed.isError, true, JSON.stringify(crashed));
    heard = Promise.withResolvers<string>();
    // The next call starts it again, subscribed again before the call reaches it.
    assert.match(await touch(), /touched 1/);
    assert.equal(await heard.promise, uri);
  } finally {
    await client.close();
  }
});
