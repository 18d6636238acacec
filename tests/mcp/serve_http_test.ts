/**
 * `magi mcp --http`: Streamable HTTP on 127.0.0.1 with DNS-rebinding protection, driven by
 * the MCP SDK's own client.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { tempDir, writeConfig } from "../helpers.ts";
import { startHttp } from "./_serve.ts";

Deno.test("magi mcp --http serves the registry on loopback", async (t) => {
  await using home = await tempDir();
  await Deno.writeTextFile(join(home.path, "notes.txt"), "over http\n");
  const config = await writeConfig(home.path, { shipped_tools: false });
  const server = await startHttp(home.path, ["--config", config]);
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await t.step("the SDK client lists and calls tools", async () => {
      const client = new Client({ name: "magi-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === "read"));
      const result = await client.callTool({
        name: "read",
        arguments: { path: join(home.path, "notes.txt") },
      }) as CallToolResult;
      assert.match((result.content[0] as { text: string }).text, /over http/);
      await client.close();
    });

    await t.step("a foreign Host header is refused (DNS rebinding)", async () => {
      // fetch() sets Host itself, so this request is written by hand.
      const { port } = new URL(server.url);
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "evil", version: "1" },
        },
      });
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
      await conn.write(new TextEncoder().encode(
        `POST /mcp HTTP/1.1\r\nHost: evil.example:${port}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      ));
      const answer = await new Response(conn.readable).text();
      assert.match(answer, /^HTTP\/1\.1 403/);
      assert.match(answer, /Invalid Host/);
    });

    await t.step("a foreign Origin is refused", async () => {
      const response = await fetch(server.url, {
        method: "POST",
        headers: {
          origin: "http://evil.example",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: "{}",
      });
      assert.equal(response.status, 403);
      await response.body?.cancel();
    });
  } finally {
    await server.stop();
  }
});
