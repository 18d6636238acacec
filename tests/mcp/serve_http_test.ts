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
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    // An MCP client's call is a model's: the policy must allow the slow command below.
    policy: { rules: [{ tool: "run", command: "sleep *", decision: "allow" }] },
  });
  const server = await startHttp(home.path, ["--config", config]);
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await t.step("the SDK client lists and calls tools", async () => {
      const client = new Client({ name: "magi-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.auth },
        }),
      );
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === "read"));
      const result = await client.callTool({
        name: "read",
        arguments: { path: join(home.path, "notes.txt") },
      }) as CallToolResult;
      assert.match((result.content[0] as { text: string }).text, /over http/);
      await client.close();
    });

    await t.step("a broken SSE stream resumes with Last-Event-ID", async () => {
      const base = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...server.auth,
      };
      const post = (body: unknown, session?: string) =>
        fetch(server.url, {
          method: "POST",
          headers: session ? { ...base, "mcp-session-id": session } : base,
          body: JSON.stringify(body),
        });
      const init = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "resumer", version: "1" },
        },
      });
      const session = init.headers.get("mcp-session-id")!;
      await init.text();
      await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).text();
      const call = await post({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "run", arguments: { command: "sleep 1; echo resumed later" } },
      }, session);
      const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
      let first = "";
      while (!first.includes("\n\n")) first += (await reader.read()).value ?? "";
      await reader.cancel();
      const priming = first.match(/^id: (\S+)\nretry: 1000\ndata: *\n\n/);
      assert.ok(priming, `priming event: ${JSON.stringify(first)}`);
      // Like a client honouring `retry`, reconnect until the server has seen the break.
      let again: Response;
      for (let i = 0;; i++) {
        again = await fetch(server.url, {
          headers: {
            accept: "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
            "last-event-id": priming[1],
            ...server.auth,
          },
        });
        if (again.status !== 409 || i >= 50) break;
        await again.body?.cancel();
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(again.status, 200);
      const replay = again.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("resumed later")) {
        const { value, done } = await replay.read();
        if (done) break;
        text += value;
      }
      await replay.cancel();
      assert.match(text, /"id":2/);
      assert.match(text, /resumed later/);
    });

    await t.step("priming events follow the revision the session negotiated", async () => {
      /** The first SSE event of a tools/list POSTed with `header` in a session at `revision`. */
      const firstEvent = async (revision: string, header: string) => {
        const post = (body: unknown, session?: string) =>
          fetch(server.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": header,
              ...(session ? { "mcp-session-id": session } : {}),
              ...server.auth,
            },
            body: JSON.stringify(body),
          });
        const init = await post({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: revision,
            capabilities: {},
            clientInfo: { name: "prime", version: "1" },
          },
        });
        const session = init.headers.get("mcp-session-id")!;
        await init.text();
        const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
        const text = await list.text();
        return text.slice(0, text.indexOf("\n\n") + 2);
      };
      // Negotiated 2025-11-25: primed, even when a request's header names 2025-03-26.
      assert.match(
        await firstEvent("2025-11-25", "2025-03-26"),
        /^id: \S+\nretry: 1000\ndata: *\n\n$/,
      );
      // Negotiated 2025-03-26: no empty-data event, which such clients cannot take.
      assert.match(await firstEvent("2025-03-26", "2025-03-26"), /^event: message\n/);
    });

    await t.step("sessions past the cap close the least recently used", async () => {
      const init = async () => {
        const response = await fetch(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...server.auth,
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "many", version: "1" },
            },
          }),
        });
        await response.body?.cancel();
        return response.headers.get("mcp-session-id")!;
      };
      const ping = async (session: string) => {
        const response = await fetch(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
            ...server.auth,
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
        });
        await response.body?.cancel();
        return response.status;
      };
      const first = await init();
      const kept = await init();
      for (let i = 0; i < 64; i++) {
        if (i === 10) assert.equal(await ping(kept), 200); // used again: kept
        await init();
      }
      assert.equal(await ping(first), 404);
      assert.equal(await ping(kept), 200);
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
          `Authorization: ${server.auth.authorization}\r\n` +
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
          ...server.auth,
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
