/**
 * An MCP message over the cap (config `limits.mcp_message_bytes`) is an error for that call
 * and the session lives on — magi as a client of a real stdio server, framing unit-tested.
 */
import { FIXTURE } from "./servers.ts";
import assert from "node:assert/strict";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { CappedLines, readEnds, readHead, readTailId } from "../../lib/core/capped_lines.ts";
import { closeMcpServers } from "../../lib/sources/mcp/client.ts";
import { testRuntime } from "../helpers.ts";
import { alive } from "../process/helpers.ts";

Deno.test("CappedLines passes lines whole and drops one over the cap, however cut", () => {
  const enc = new TextEncoder();
  const big = `{"jsonrpc":"2.0","id":9,"result":{"text":"${"y".repeat(300)}"}}`;
  const all = enc.encode(`short one\n${big}\r\nafter\nrest`);
  for (const size of [1, 7, 100, all.length]) {
    const lines = new CappedLines(64);
    const pieces = [];
    for (let i = 0; i < all.length; i += size) {
      pieces.push(...lines.push(all.subarray(i, i + size)));
    }
    pieces.push(...lines.end());
    const dec = (b: Uint8Array) => new TextDecoder().decode(b);
    assert.deepEqual(
      pieces.map((p) => p.kind === "line" ? dec(p.bytes) : `over ${p.bytes}`),
      ["short one\n", `over ${big.length + 1}`, "after\n", "rest"],
      `chunks of ${size}`,
    );
    const over = pieces[1];
    assert.ok(over.kind === "oversized" && readHead(dec(over.head)).id === 9);
    assert.equal(dec(over.tail), big.slice(-Math.min(big.length, 4096)));
  }
});

Deno.test("readHead finds the top-level id, not one nested in params", () => {
  assert.deepEqual(readHead('{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"te'), {
    id: 5,
    method: false,
  });
  assert.deepEqual(readHead('{"jsonrpc":"2.0","result":{"id":3,"x":"'), { method: false });
  assert.deepEqual(
    readHead('{"method":"tools/call","params":{"id":1,"a":[1,{"b":"}"}]},"id":"k-2","x'),
    { id: "k-2", method: true },
  );
  assert.deepEqual(readHead('{"id":1.5,"method":"x"'), { method: true });
  assert.deepEqual(readHead("not json"), { method: false });
});

Deno.test("readTailId finds the id the SDK writes last, not a nested one", () => {
  assert.equal(readTailId('…x"}]},"jsonrpc":"2.0","id":12}'), 12);
  assert.equal(readTailId('…x"}]},"jsonrpc":"2.0","id":"a-1" } '), "a-1");
  assert.equal(readTailId('…,"result":{"id":3}}'), undefined);
  assert.equal(readTailId('…"text":"say \\"id\\":4}'), undefined);
  assert.equal(readTailId('…"text":"x,\\"id\\":4}"}'), undefined);
  const enc = new TextEncoder();
  assert.deepEqual(
    readEnds(
      enc.encode('{"result":{"content":[{"te'),
      enc.encode('xt"}]},"jsonrpc":"2.0","id":3}'),
    ),
    { id: 3, method: false },
  );
});

Deno.test("a server's message over the cap is an error result; the next call works", async () => {
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      "limits.mcp_message_bytes": 1024 * 1024,
      mcp_servers: { fixture: FIXTURE },
    },
  });
  const { rt } = tr;
  try {
    const pid = async () =>
      Number((await runTool(rt, { caller: "person", name: "fixture__pid", args: {} })).said);
    const before = await pid();
    const huge = await runTool(rt, { caller: "person", name: "fixture__huge", args: {} });
    assert.equal(huge.is_error, true);
    assert.match(huge.said, /message was 209715\d\d bytes, over the cap of 1048576 bytes/);
    assert.match(huge.said, /limits\.mcp_message_bytes/);
    // The same server answers the next call: the connection lived on.
    assert.equal(await pid(), before);
    await closeMcpServers();
    for (let i = 0; i < 200 && alive(before); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(before), false, "the server is left running");
  } finally {
    await closeMcpServers();
  }
});
