/**
 * `magi mcp --http` requires a bearer token: generated once into a private file and shown
 * once, checked on every request; `--no-auth` serves without it. Driven by the MCP SDK's own
 * client over loopback HTTP.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { magi, tempDir, writeConfig } from "../helpers.ts";
import { startHttp, tokenFile } from "./_serve.ts";

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "auth-test", version: "1" },
  },
});

function post(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: INIT,
  });
}

async function listWith(url: string, headers: Record<string, string>): Promise<string[]> {
  const client = new Client({ name: "magi-test", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

Deno.test("magi mcp --http requires the bearer token it generated", async (t) => {
  await using home = await tempDir();
  const config = await writeConfig(home.path, { shipped_tools: false });
  const first = await startHttp(home.path, ["--config", config]);
  let token: string;
  try {
    token = first.token!;
    await t.step("the token is 32 random bytes in a 0600 file in a 0700 folder", () => {
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Deno.statSync(tokenFile(home.path)).mode! & 0o777, 0o600);
      assert.equal(Deno.statSync(dirname(tokenFile(home.path))).mode! & 0o777, 0o700);
    });

    await t.step("it is printed once, with how to send it", () => {
      const stderr = first.stderr();
      assert.equal(stderr.split(token).length - 1, 1, stderr);
      assert.ok(stderr.includes(`Authorization: Bearer ${token}`), stderr);
      assert.ok(stderr.includes(tokenFile(home.path)), stderr);
    });

    await t.step("no token: 401 with WWW-Authenticate and a JSON-RPC error", async () => {
      const response = await post(first.url);
      assert.equal(response.status, 401);
      assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer\b/);
      const body = await response.json();
      assert.equal(body.jsonrpc, "2.0");
      assert.equal(body.id, null);
      assert.match(body.error.message, /Authorization: Bearer/);
    });

    await t.step("a wrong token, or another scheme: 401", async () => {
      for (const value of [`Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`]) {
        const response = await post(first.url, { authorization: value });
        assert.equal(response.status, 401, value);
        assert.match(response.headers.get("www-authenticate") ?? "", /invalid_token/);
        await response.body?.cancel();
      }
    });

    await t.step("the SDK client without the token cannot connect", async () => {
      await assert.rejects(listWith(first.url, {}));
    });

    await t.step("with the token tools/list works", async () => {
      const names = await listWith(first.url, { authorization: `Bearer ${token}` });
      assert.ok(names.includes("read"), names.join(", "));
    });
  } finally {
    await first.stop();
  }

  await t.step("a second start uses the same token and does not print it", async () => {
    const again = await startHttp(home.path, ["--config", config]);
    try {
      assert.equal(again.token, token);
      const names = await listWith(again.url, again.auth);
      assert.ok(names.includes("read"));
      const stderr = again.stderr();
      assert.ok(!stderr.includes(token), stderr);
      assert.ok(stderr.includes(tokenFile(home.path)), stderr);
    } finally {
      await again.stop();
    }
  });
});

Deno.test("magi mcp --http --no-auth serves without a token, and says so", async () => {
  await using home = await tempDir();
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    "limits.mcp_message_bytes": 65536,
  });
  const server = await startHttp(home.path, ["--config", config, "--no-auth"]);
  try {
    const names = await listWith(server.url, {});
    assert.ok(names.includes("read"));
    // A body over limits.mcp_message_bytes is refused; the server goes on.
    const big = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
        params: { x: "y".repeat(70000) },
      }),
    });
    assert.equal(big.status, 413);
    await big.body?.cancel();
    assert.ok((await listWith(server.url, {})).includes("read"));
    assert.match(server.stderr(), /no authentication \(--no-auth\)/);
    assert.throws(() => Deno.statSync(tokenFile(home.path)), Deno.errors.NotFound);
  } finally {
    await server.stop();
  }
});

Deno.test("magi mcp --http --token-file: its token; a file others can read is refused", async () => {
  await using home = await tempDir();
  const config = await writeConfig(home.path, { shipped_tools: false });
  const file = join(home.path, "my-token");
  Deno.writeTextFileSync(file, "a-token-of-my-own-choosing\n", { mode: 0o600 });
  Deno.chmodSync(file, 0o600);
  const server = await startHttp(home.path, ["--config", config, "--token-file", file]);
  try {
    assert.equal(server.token, "a-token-of-my-own-choosing");
    assert.ok(
      (await listWith(server.url, { authorization: "Bearer a-token-of-my-own-choosing" }))
        .includes("read"),
    );
  } finally {
    await server.stop();
  }
  // A missing file is generated (0600); the person's folder keeps its mode.
  const folder = join(home.path, "mine");
  Deno.mkdirSync(folder);
  Deno.chmodSync(folder, 0o755);
  const made = await startHttp(home.path, ["--config", config, "--token-file", "mine/t"]);
  try {
    assert.match(made.token!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(made.stderr().split(made.token!).length - 1, 1);
    assert.equal(Deno.statSync(join(folder, "t")).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(folder).mode! & 0o777, 0o755);
  } finally {
    await made.stop();
  }
  Deno.chmodSync(file, 0o644);
  const refused = await magi(["mcp", "--http", "--config", config, "--token-file", file], {
    home: home.path,
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /Cannot use token file ".*my-token": its mode is 0644/);
  assert.ok(!refused.stderr.includes("a-token-of-my-own-choosing"));
});
