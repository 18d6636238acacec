/**
 * The MCP server in-process (SDK client and server over the SDK's in-memory transport):
 * what a client without elicitation gets when a tool asks a question, and the annotations.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../lib/mcp/server.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

Deno.test("a question to a client without elicitation is an error result saying what was asked", async () => {
  await using dir = await tempDir();
  await makeTool(
    dir.path,
    "asker",
    '#!/bin/sh\n[ "$1" = "--help" ] && { echo "Asks for a colour"; echo "Usage: asker"; exit 0; }\n' +
      'echo \'{"ask": "Which colour?", "choices": ["red", "blue"]}\' >"$MAGI_ASK"\n',
  );
  await using tr = await testRuntime({
    toolsDirs: [dir.path],
    config: { shipped_tools: false },
  });
  const server = createMcpServer(() => tr.rt);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "plain", version: "1.0.0" });
  await client.connect(b);
  try {
    const result = await client.callTool({ name: "asker", arguments: {} }) as CallToolResult;
    assert.equal(result.isError, true);
    const text = (result.content[0] as { text: string }).text;
    assert.match(text, /asked "Which colour\?"/);
    assert.match(text, /"red", "blue"/);
    // The advice fits MCP: the client would need elicitation (not `magi call --answer`).
    assert.match(
      text,
      /no answer was given \(the MCP client cannot be asked: it did not declare elicitation\)/,
    );
    assert.ok(!text.includes("--answer"), text);

    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(byName.get("read")?.annotations, { readOnlyHint: true });
    assert.equal(byName.get("write")?.annotations?.destructiveHint, true);
    assert.equal(byName.get("run")?.annotations?.destructiveHint, true);
    assert.equal(byName.get("asker")?.annotations, undefined);
    assert.ok(!JSON.stringify(tools).includes("x-magi"));
  } finally {
    await client.close();
  }
});
