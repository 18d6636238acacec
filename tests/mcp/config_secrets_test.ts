/**
 * The values of an MCP server's config `env` and `headers` are secrets: a server that echoes
 * one gives back its mask, whatever the variable's name.
 */
import assert from "node:assert/strict";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeMcpServers, specSecrets } from "../../lib/sources/mcp/client.ts";
import { testRuntime } from "../helpers.ts";
import { FIXTURE } from "./servers.ts";

Deno.test("specSecrets takes env and header values, leaving plain ones out", () => {
  const secrets = specSecrets({
    command: "x",
    env: {
      SERVICE_KEY_MATERIAL: "literal-abcdef-123",
      PATH: "${PATH}",
      GH_TOKEN: "${MY_TOKEN}",
      DEBUG: "true",
      PORT: "8080",
      ROOT: "/srv/data",
      SHORT: "abc",
    },
    headers: { Authorization: "Bearer ${MY_TOKEN}" },
  }, { PATH: "/usr/bin:/bin", MY_TOKEN: "tok-0123456789" });
  assert.deepEqual(secrets, [
    { name: "SERVICE_KEY_MATERIAL", value: "literal-abcdef-123" },
    { name: "GH_TOKEN", value: "tok-0123456789" },
    { name: "SECRET", value: "Bearer tok-0123456789" },
  ]);
});

Deno.test("a server's config env value comes back masked, whatever its name", async () => {
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      mcp_servers: { fixture: { ...FIXTURE, env: { FIXTURE_SETTING: "plain-looking-9a8b7c" } } },
    },
  });
  try {
    const result = await runTool(tr.rt, {
      caller: "person",
      name: "fixture__env",
      args: { name: "FIXTURE_SETTING" },
    });
    assert.equal(result.said.trim(), "value: $FIXTURE_SETTING");
    assert.ok(!result.shown.includes("plain-looking-9a8b7c"));
  } finally {
    await closeMcpServers();
  }
});

Deno.test("a header value HTTP cannot carry costs only its server, with one line naming the header", async () => {
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      mcp_servers: {
        web: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer tok…en-4242" } },
      },
    },
  });
  try {
    const lines = tr.warnings.filter((w) => w.includes('"web"'));
    assert.equal(lines.length, 1, tr.warnings.join("\n"));
    assert.match(
      lines[0],
      /MCP server "web" left out: header "Authorization": its value must be plain ASCII text on one line/,
    );
    assert.ok(!lines[0].includes("4242"));
  } finally {
    await closeMcpServers();
  }
});
