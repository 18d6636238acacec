/**
 * An MCP server's `sampling/createMessage` (SPEC S9), through server-everything's
 * `trigger-sampling-request`: `magi chat` asks the person, then its provider (a scripted
 * server) answers, masked both ways; `magi run` and `magi call` refuse it, saying why.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, REPO, tempDir } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig } from "../agent/setup.ts";
import { denoServer } from "./servers.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;
const SECRET = "tok-5e6f7a8b9c0d1e2f";
const TOOL = "everything__trigger-sampling-request";

function config(dir: string, url: string): Promise<string> {
  return agentConfig(dir, "openai", url, {
    mcp_servers: {
      everything: denoServer(imports["@modelcontextprotocol/server-everything"], "stdio"),
    },
    // The model's call of the MCP tool runs without a question of the policy's.
    policy: { rules: [{ tool: "*", source: "mcp", decision: "allow" }] },
  });
}

function env(dir: string): Record<string, string> {
  return {
    FAKE_PROVIDER_KEY: "fake-provider-key-0001",
    MY_SERVICE_TOKEN: SECRET,
    XDG_CACHE_HOME: join(dir, "cache"),
  };
}

const CALL = { id: "c1", name: TOOL, args: { prompt: `token ${SECRET}`, maxTokens: 30 } };

Deno.test("magi chat: a server's sampling request is asked of the person, then answered by the model", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [
    reply("openai", "", [CALL]),
    reply("openai", `Hello from the model, ${SECRET}`),
    reply("openai", "All done."),
  ]);
  const run = await magi(["chat", "--config", await config(dir.path, server.url)], {
    cwd: dir.path,
    env: env(dir.path),
    stdin: "ask the server to sample\nyes\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  const all = run.stdout + run.stderr;
  assert.match(all, /MCP server "everything" asks to use the model \(at most 30 tokens\)/);
  assert.ok(!all.includes(SECRET), "the question is masked");
  assert.match(run.stdout, /All done\./);
  // The sampling turn: the server's system prompt, no tools, the masked message.
  const sampled = server.requests[1].json;
  const messages = sampled.messages as { role: string; content: string }[];
  assert.match(JSON.stringify(messages[0]), /helpful test server/);
  assert.match(JSON.stringify(messages.at(-1)), /token \$MY_SERVICE_TOKEN/);
  assert.equal(sampled.tools, undefined);
  // The model's answer reached the server (masked) and came back in the tool result.
  const [result] = toolResultsIn("openai", server.requests[2]);
  assert.match(result.content, /Hello from the model, \$MY_SERVICE_TOKEN/);
});

Deno.test("magi chat: the person declining ends the sampling request with an error", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [
    reply("openai", "", [CALL]),
    reply("openai", "Understood."),
  ]);
  const run = await magi(["chat", "--config", await config(dir.path, server.url)], {
    cwd: dir.path,
    env: env(dir.path),
    stdin: "ask the server to sample\nno\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 2, "no sampling turn was sent");
  const [result] = toolResultsIn("openai", server.requests[1]);
  assert.match(result.content, /asked to use the model; the person declined/);
});

Deno.test("magi run and magi call refuse a server's sampling request, saying why", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [
    reply("openai", "", [CALL]),
    reply("openai", "Refused, fine."),
  ]);
  const file = await config(dir.path, server.url);
  const run = await magi(["run", "--config", file, "--answer", "yes", "sample it"], {
    cwd: dir.path,
    env: env(dir.path),
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 2, "no sampling turn was sent");
  const [result] = toolResultsIn("openai", server.requests[1]);
  assert.match(result.content, /refused: `magi run` has no one to ask/);

  const call = await magi(["call", "--config", file, TOOL, JSON.stringify(CALL.args)], {
    cwd: dir.path,
    env: env(dir.path),
  });
  assert.match(call.stdout + call.stderr, /refused: this magi command has no model to answer it/);
});
