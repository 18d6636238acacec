/** Every request on the approvals socket and its answer is written to the session. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir, TESTDATA } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig, onlySession } from "../agent/setup.ts";

Deno.test("magi run: a tool's approval request is refused non-interactively and recorded in the session", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [
    reply("openai", "", [{
      id: "c1",
      name: "approve-me",
      args: { args: ["Rotate", "the", "keys"] },
    }]),
    reply("openai", "Not approved."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(
    [
      "run",
      "rotate the keys",
      "--config",
      config,
      "--tools-dir",
      join(TESTDATA, "policy", "tools"),
    ],
    { cwd: dir.path, env: { FAKE_PROVIDER_KEY: "fake-provider-key-0001" } },
  );
  assert.equal(run.code, 0, run.stderr);
  const [result] = toolResultsIn("openai", server.requests[1]);
  assert.match(result.content, /refused: no person to ask/);
  const transcript = await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl"));
  const approvals = transcript.trim().split("\n").map((l) => JSON.parse(l))
    .filter((e) => e.type === "approval");
  assert.equal(approvals.length, 1);
  assert.equal(approvals[0].ask, "Rotate the keys");
  assert.equal(approvals[0].approved, false);
  assert.equal(approvals[0].by, "no person");
});

Deno.test("magi run: an approval the policy grants, and one it denies, are recorded in the session", async () => {
  for (const decision of ["allow", "deny"] as const) {
    await using dir = await tempDir();
    await using server = scriptedServer("openai", [
      reply("openai", "", [{
        id: "c1",
        name: "approve-me",
        args: { args: ["Rotate", "the", "keys"] },
      }]),
      reply("openai", "Done."),
    ]);
    const config = await agentConfig(dir.path, "openai", server.url, {
      policy: {
        rules: [
          { tool: "approve-me", decision: "allow" },
          { tool: "approval", fields: { ask: "Rotate*" }, decision },
        ],
      },
    });
    const run = await magi(
      [
        "run",
        "rotate the keys",
        "--config",
        config,
        "--tools-dir",
        join(TESTDATA, "policy", "tools"),
      ],
      { cwd: dir.path, env: { FAKE_PROVIDER_KEY: "fake-provider-key-0001" } },
    );
    assert.equal(run.code, 0, run.stderr);
    const transcript = await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl"));
    const approvals = transcript.trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.type === "approval");
    assert.equal(approvals.length, 1, transcript);
    assert.equal(approvals[0].ask, "Rotate the keys");
    assert.equal(approvals[0].approved, decision === "allow", JSON.stringify(approvals[0]));
  }
});
