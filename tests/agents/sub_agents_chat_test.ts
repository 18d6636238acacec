import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { alive, pidsWith } from "../process/helpers.ts";
import { type Received, reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig, interruptThenGoOn, makeTools, spawnChat } from "../agent/setup.ts";

function isChild(r: Received): boolean {
  const messages = (r.json.messages ?? []) as Record<string, unknown>[];
  return String(messages[0]?.content ?? "").includes("You are a sub-agent of session");
}

Deno.test("magi chat: Ctrl-C ends both running sub-agents and their tools' process groups", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  const markers = [join(dir.path, "nap-one"), join(dir.path, "nap-two")];
  let parentTurns = 0;
  await using server = scriptedServer("openai", (_i, r) => {
    if (isChild(r)) {
      const task = JSON.stringify(r.json.messages);
      const marker = task.includes("first") ? markers[0] : markers[1];
      return reply("openai", "", [{ id: "n", name: "nap", args: { args: [marker] } }]);
    }
    parentTurns++;
    return parentTurns === 1
      ? reply("openai", "", [
        { id: "a1", name: "agent", args: { task: "the first nap" } },
        { id: "a2", name: "agent", args: { task: "the second nap" } },
      ])
      : reply("openai", "Fine, awake.");
  });
  const config = await agentConfig(dir.path, "openai", server.url);
  const child = spawnChat(dir.path, ["--config", config, "--tools-dir", tools]);
  const stdin = child.stdin.getWriter();
  await stdin.write(new TextEncoder().encode("take two naps\n"));
  for (let i = 0; i < 400; i++) {
    const seen = await Promise.all(markers.map((m) => Deno.readTextFile(m).catch(() => "")));
    if (seen.every((s) => s.trim() !== "")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const napping = markers.flatMap((m) => pidsWith(m));
  assert.ok(napping.length >= 2, "the sub-agents' tools did not both start");
  const stdout = await interruptThenGoOn(child, stdin);
  assert.match(stdout, /Fine, awake\./);
  for (const pid of napping) assert.equal(alive(pid), false, "a sub-agent's tool still runs");
  const parentLast = server.requests.filter((r) => !isChild(r)).at(-1)!;
  const results = toolResultsIn("openai", parentLast);
  assert.deepEqual(results.map((r) => r.id), ["a1", "a2"]);
  for (const r of results) assert.match(r.content, /ended: cancelled/);
  // Each child session records that it was cancelled.
  const ends = [...Deno.readDirSync(join(dir.path, "sessions"))].map((e) =>
    Deno.readTextFileSync(join(dir.path, "sessions", e.name, "transcript.jsonl")).trim().split(
      "\n",
    ).map((l) => JSON.parse(l))
  ).filter((ev) => ev[0].parent).map((ev) => ev.at(-1).reason);
  assert.deepEqual(ends, ["cancelled", "cancelled"]);
});
