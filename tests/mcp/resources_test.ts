/**
 * Upstream resources through the builtins list_mcp_resources, list_mcp_resource_templates and
 * read_mcp_resource, and upstream prompts through listMcpPrompts/getMcpPrompt (chat's slash
 * commands) — against server-everything from npm.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeMcpServers, getMcpPrompt, listMcpPrompts } from "../../lib/sources/mcp/client.ts";
import { REPO, testRuntime } from "../helpers.ts";
import { denoServer } from "./servers.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;
const EVERYTHING = denoServer(imports["@modelcontextprotocol/server-everything"], "stdio");

Deno.test("upstream resources are listed and read; prompts are listed and fetched", async (t) => {
  await using tr = await testRuntime({
    config: { shipped_tools: false, mcp_servers: { everything: EVERYTHING } },
  });
  const { rt } = tr;
  const call = (name: string, args: Record<string, unknown>) =>
    runTool(rt, { caller: "person", name, args });
  try {
    let uri = "";
    await t.step("list_mcp_resources gives server, uri, name and type", async () => {
      const result = await call("list_mcp_resources", {});
      assert.equal(result.is_error, false, result.said);
      const { resources } = JSON.parse(result.said.split("\n[magi:")[0]);
      const doc = resources.find((r: { uri: string }) =>
        r.uri.startsWith("demo://resource/static/")
      );
      assert.ok(doc, result.said.slice(0, 500));
      assert.equal(doc.server, "everything");
      uri = doc.uri;
    });

    await t.step("read_mcp_resource gives its text", async () => {
      const result = await call("read_mcp_resource", { server: "everything", uri });
      assert.equal(result.is_error, false, result.said);
      assert.match(
        result.said,
        new RegExp(`^\\[resource ${uri.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
      );
    });

    await t.step("an unknown server is an error result naming the configured ones", async () => {
      const result = await call("read_mcp_resource", { server: "nope", uri });
      assert.equal(result.is_error, true);
      assert.match(result.said, /no MCP server "nope" \(configured: everything\)/);
    });

    await t.step("list_mcp_resource_templates gives URI templates", async () => {
      const result = await call("list_mcp_resource_templates", { server: "everything" });
      assert.equal(result.is_error, false, result.said);
      assert.match(result.said, /"uriTemplate": "demo:\/\/resource\/dynamic\/text\/\{/);
    });

    await t.step("prompts are listed with their arguments and fetched as text", async () => {
      const prompts = await listMcpPrompts();
      const args = prompts.find((p) => p.name === "args-prompt");
      assert.ok(args, JSON.stringify(prompts));
      assert.equal(args.server, "everything");
      assert.deepEqual(args.arguments.map((a) => [a.name, a.required ?? false]), [
        ["city", true],
        ["state", false],
      ]);
      const text = await getMcpPrompt("everything", "args-prompt", { city: "Lyon" });
      assert.match(text, /Lyon/);
      await assert.rejects(getMcpPrompt("everything", "no-such-prompt"), /no-such-prompt/);
    });
  } finally {
    await closeMcpServers();
  }
});
