/**
 * An MCP server's prompt as a chat slash command (SPEC S9, as Claude Code offers them):
 * `/mcp__everything__args-prompt Lyon` fetches server-everything's prompt with `city` = Lyon
 * and sends its text to the model as the person's message; /help lists it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, REPO, tempDir } from "../helpers.ts";
import { reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig } from "../agent/setup.ts";
import { denoServer } from "../mcp/servers.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;

Deno.test("magi chat: an MCP prompt is a slash command whose text goes to the model", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [reply("openai", "Lyon it is.")]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    mcp_servers: {
      everything: denoServer(imports["@modelcontextprotocol/server-everything"], "stdio"),
    },
  });
  const run = await magi(["chat", "--config", config], {
    cwd: dir.path,
    env: { FAKE_PROVIDER_KEY: "fake-provider-key-0001", XDG_CACHE_HOME: join(dir.path, "cache") },
    stdin: "/mcp__everything__args-prompt Lyon\n/help\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /Lyon it is\./);
  assert.match(run.stdout, /\/mcp__everything__args-prompt CITY \[state\]/);
  const messages = server.requests[0].json.messages as { role: string; content: string }[];
  const user = messages.filter((m) => m.role === "user");
  assert.equal(user.length, 1);
  assert.match(String(user[0].content), /Lyon/);
});
