import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "./fake_provider.ts";
import { agentConfig, makeTools, onlySession } from "./setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

for (const kind of ["openai", "anthropic"] as const) {
  Deno.test(`magi run (${kind}): a three-step task with two parallel tool calls`, async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    await using server = scriptedServer(kind, [
      reply(kind, "Starting.", [
        // wait-for only finishes once touch-file has run: the calls must run concurrently.
        { id: "call_w", name: "wait-for", args: { args: ["flag"] } },
        { id: "call_t", name: "touch-file", args: { args: ["flag"] } },
      ]),
      reply(kind, "", [{ id: "call_s", name: "say", args: { args: ["both", "done"] } }]),
      reply(kind, "All done: the flag was seen."),
    ]);
    const config = await agentConfig(dir.path, kind, server.url);
    const run = await magi(
      ["run", "make a flag and wait for it", "--config", config, "--tools-dir", tools],
      { cwd: dir.path, env: ENV },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Starting\.\nAll done: the flag was seen\.\n/);
    assert.match(run.stderr, /→ wait-for/);
    assert.match(run.stderr, /saw flag/);
    assert.equal(server.requests.length, 3);
    assert.deepEqual(toolResultsIn(kind, server.requests[1]).map((r) => [r.id, r.content]), [
      ["call_w", "saw flag\n"],
      ["call_t", "touched flag\n"],
    ]);
    assert.deepEqual(toolResultsIn(kind, server.requests[2]).map((r) => r.content), [
      "saw flag\n",
      "touched flag\n",
      "both done\n",
    ]);
    const first = server.requests[0].json;
    const tools0 = first.tools as Record<string, unknown>[];
    const names = tools0.map((t) =>
      (kind === "openai" ? (t.function as { name: string }).name : t.name) as string
    );
    assert.ok(names.includes("wait-for") && names.includes("say"), names.join());
    const transcript = await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl"));
    const types = transcript.trim().split("\n").map((l) => JSON.parse(l).type);
    assert.deepEqual(types.filter((t) => t !== "usage"), [
      "session",
      "user",
      "assistant",
      "tool_result",
      "tool_result",
      "assistant",
      "tool_result",
      "assistant",
      "end",
    ]);
  });
}
