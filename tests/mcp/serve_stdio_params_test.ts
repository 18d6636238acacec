/**
 * `magi mcp` over stdio spoken to in raw JSON-RPC lines: a `tools/call` whose params do not
 * satisfy the CallToolRequest schema is JSON-RPC -32602 (Invalid params), never -32603.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, tempDir, writeConfig } from "../helpers.ts";

interface Reply {
  id?: number;
  result?: { content?: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string };
}

/** Starts `magi mcp` on stdio; `ask` sends one request line and waits for its reply line. */
async function rawServer(home: string) {
  const config = await writeConfig(home, { shipped_tools: false });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), join(REPO, "main.ts")]
      .concat(["mcp", "--config", config]),
    cwd: home,
    env: {
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const ask = async (id: number, method: string, params: unknown): Promise<Reply> => {
    await send({ jsonrpc: "2.0", id, method, params });
    while (true) {
      const end = buffered.indexOf("\n");
      if (end >= 0) {
        const reply = JSON.parse(buffered.slice(0, end)) as Reply;
        buffered = buffered.slice(end + 1);
        if (reply.id === id) return reply;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`magi mcp ended before answering request ${id}`);
      buffered += value;
    }
  };
  return {
    send,
    ask,
    async [Symbol.asyncDispose]() {
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

Deno.test("tools/call with arguments that are not an object is JSON-RPC -32602 saying so", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(join(home.path, "notes.txt"), "hello\n");
  await using server = await rawServer(home.path);
  const init = await server.ask(1, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });
  assert.ok(init.result, JSON.stringify(init));
  await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });

  let id = 2;
  for (const bad of ["a string", [1, 2], 42, null, true]) {
    const reply = await server.ask(id++, "tools/call", { name: "read", arguments: bad });
    assert.equal(reply.result, undefined, JSON.stringify(reply));
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
    assert.match(reply.error!.message, /"arguments" must be an object/, JSON.stringify(bad));
    assert.ok(!reply.error!.message.includes("\n"), reply.error!.message);
  }
  // One plain line: no "MCP error -32602:" in the message, which a client would prefix again.
  const plain = await server.ask(id++, "tools/call", { name: "read", arguments: "x" });
  assert.equal(plain.error?.message, '"arguments" must be an object, not a string');
  const unknown = await server.ask(id++, "tools/call", { name: "nosuch", arguments: {} });
  assert.equal(unknown.error?.code, -32602, JSON.stringify(unknown));
  assert.equal(unknown.error?.message, 'Unknown tool "nosuch"');
  const nameless = await server.ask(id++, "tools/call", { arguments: {} });
  assert.equal(nameless.error?.code, -32602, JSON.stringify(nameless));
  assert.match(nameless.error!.message, /"name" must be a string/);

  // The server is still fine: a well-formed call, and one without arguments, are answered.
  const good = await server.ask(id++, "tools/call", {
    name: "read",
    arguments: { path: join(home.path, "notes.txt") },
  });
  assert.equal(good.error, undefined, JSON.stringify(good));
  assert.match(good.result!.content![0].text, /hello/);
  const none = await server.ask(id++, "tools/call", { name: "read" });
  assert.equal(none.result?.isError, true, JSON.stringify(none));
  assert.match(none.result!.content![0].text, /path/);
});
