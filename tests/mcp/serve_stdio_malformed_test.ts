/**
 * `magi mcp` on stdio answers a request it cannot parse, when its id can be read: a
 * `tools/call` whose params are null or an array, a `_meta` that is no object. The SDK alone
 * drops such a line, and its client waits for ever.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type ErrorReply, guardedInput, replyToMalformed } from "../../lib/mcp/stdio_guard.ts";
import { REPO, tempDir, writeConfig } from "../helpers.ts";

Deno.test("a request that fails the JSON-RPC schema but has an id gets an error reply", () => {
  const line = (params: unknown, method = "tools/call") =>
    JSON.stringify({ jsonrpc: "2.0", id: 7, method, params });
  assert.deepEqual(replyToMalformed(line(null)), {
    jsonrpc: "2.0",
    id: 7,
    error: { code: -32602, message: '"params" must be an object, not null' },
  });
  assert.equal(
    replyToMalformed(line([1]))?.error.message,
    '"params" must be an object, not an array',
  );
  assert.equal(replyToMalformed(line(5, "tools/list"))?.error.code, -32602);
  const meta = replyToMalformed(line({ name: "read", arguments: {}, _meta: "x" }));
  assert.equal(meta?.error.code, -32602);
  assert.match(meta!.error.message, /"params\._meta"/);
  assert.equal(replyToMalformed('{"jsonrpc":"1.0","id":"a","method":"ping"}')?.error.code, -32600);
  // No JSON: -32700 Parse error, id null.
  const parse = replyToMalformed("not json");
  assert.equal(parse?.error.code, -32700);
  assert.equal(parse?.id, null);
  assert.match(parse!.error.message, /^Parse error: /);
  // Well formed, no id, a notification: left to the SDK.
  assert.equal(replyToMalformed(line({ name: "read", arguments: {} })), undefined);
  assert.equal(replyToMalformed(line(undefined)), undefined);
  assert.equal(
    replyToMalformed('{"jsonrpc":"2.0","method":"notifications/x","params":1}'),
    undefined,
  );
  assert.equal(
    replyToMalformed('{"jsonrpc":"2.0","id":null,"method":"ping","params":1}'),
    undefined,
  );
});

Deno.test("guardedInput passes good lines on byte for byte and answers the rest, however cut", async () => {
  const good = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"é","arguments":{}}}\r\n',
  ];
  const bad = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":null}\n';
  const tooLong = `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"${"y".repeat(600)}"}}\n`;
  const all = new TextEncoder().encode(
    good[0] + bad + good[1] + "not json\n" + tooLong + '{"partial":',
  );
  for (const size of [1, 3, 64, all.length]) {
    const input = new PassThrough();
    const replies: ErrorReply[] = [];
    const out = guardedInput(input, (r) => replies.push(r), 512);
    const chunks: Uint8Array[] = [];
    out.on("data", (c: Uint8Array) => chunks.push(c));
    const ended = new Promise((resolve) => out.on("end", resolve));
    for (let i = 0; i < all.length; i += size) input.write(all.subarray(i, i + size));
    input.end();
    await ended;
    const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
    assert.equal(text, good.join("") + '{"partial":', `chunks of ${size}`);
    assert.deepEqual(replies.map((r) => [r.id, r.error.code]), [
      [3, -32602],
      [null, -32700],
      [4, -32600],
    ]);
    assert.match(replies[2].error.message, /is 6\d\d bytes, over the cap of 512 bytes/);
  }
});

Deno.test("magi mcp answers params null, a line over the cap, no JSON, and goes on serving", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(join(home.path, "notes.txt"), "hello\n");
  const config = await writeConfig(home.path, {
    shipped_tools: false,
    "limits.mcp_message_bytes": 1024 * 1024,
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), join(REPO, "main.ts")]
      .concat(["mcp", "--config", config]),
    cwd: home.path,
    env: {
      XDG_CONFIG_HOME: join(home.path, "config"),
      XDG_CACHE_HOME: join(home.path, "cache"),
      XDG_STATE_HOME: join(home.path, "state"),
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = [
    {
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    },
    { method: "notifications/initialized" },
    { id: 2, method: "tools/call", params: null },
    { id: 3, method: "tools/call", params: [] },
    // Over the 1 MiB cap of this config: answered with its id (written last, as the SDK's
    // client does), never held whole.
    {
      method: "tools/call",
      params: { name: "read", arguments: { path: "x".repeat(3 * 1024 * 1024) } },
      id: 5,
    },
    "not json",
    { id: 4, method: "tools/call", params: { name: "read", arguments: { path: "notes.txt" } } },
  ].map((m) => (typeof m === "string" ? m : JSON.stringify({ jsonrpc: "2.0", ...m })) + "\n")
    .join("");
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const replies = new Map<
    number | null,
    { error?: { code: number; message: string }; result?: unknown }
  >();
  let buffered = "";
  // The guard answers 2 and 3 at once; 4 is answered after them.
  while (!replies.has(4)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const reply = JSON.parse(buffered.slice(0, end));
      replies.set(reply.id, reply);
      buffered = buffered.slice(end + 1);
    }
  }
  await writer.close();
  await reader.cancel();
  await child.status;
  assert.deepEqual(replies.get(2)?.error, {
    code: -32602,
    message: '"params" must be an object, not null',
  });
  assert.equal(replies.get(3)?.error?.code, -32602);
  assert.equal(replies.get(5)?.error?.code, -32600);
  assert.match(replies.get(5)!.error!.message, /is 3145\d\d\d bytes, over the cap of 1048576/);
  assert.equal(replies.get(null)?.error?.code, -32700);
  assert.match(JSON.stringify(replies.get(4)?.result), /hello/);
});
