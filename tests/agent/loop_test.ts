import assert from "node:assert/strict";
import { join } from "node:path";
import type { Tool } from "../../lib/core/types.ts";
import { anthropicReply, oaChunk, type Reply, reply, toolResultsIn } from "./fake_provider.ts";
import { type LoopRun, runLoop } from "./harness.ts";

type Kind = "openai" | "anthropic";

/**
 * Runs one task in-process against a scripted server, with the fixture tools and
 * `extraTools`; returns the JSON events shown. A provider error is thrown.
 */
async function runTask(
  kind: Kind,
  replies: Reply[],
  task: string,
  extraConfig: Record<string, unknown> = {},
  extraTools: Tool[] = [],
): Promise<LoopRun> {
  const run = await runLoop({
    kind,
    replies,
    task,
    provider: { max_retries: 2 },
    config: extraConfig,
    fixtureTools: true,
    extraTools,
  });
  if (run.error) {
    await run[Symbol.asyncDispose]();
    throw run.error;
  }
  return run;
}

for (const kind of ["openai", "anthropic"] as const) {
  Deno.test(`loop (${kind}): a tool error goes back to the model, which recovers`, async () => {
    await using run = await runTask(kind, [
      reply(kind, "", [{ id: "call_1", name: "fail", args: {} }]),
      reply(kind, "", [{ id: "call_2", name: "say", args: { args: ["plan", "b"] } }]),
      reply(kind, "Recovered with plan b."),
    ], "try it");
    assert.equal(run.reason, "done");
    const [failed] = toolResultsIn(kind, run.requests[1]);
    assert.equal(failed.id, "call_1");
    assert.match(failed.content, /disk on fire/);
    assert.match(failed.content, /exit status 3/);
    if (kind === "anthropic") assert.equal(failed.is_error, true);
    const results = run.events.filter((e) => e.type === "tool_result");
    assert.deepEqual(results.map((r) => r.is_error), [true, false]);
    assert.equal(run.events.findLast((e) => e.type === "text")?.text, "Recovered with plan b.");
  });

  Deno.test(`loop (${kind}): a stream cut mid-way is sent again`, async () => {
    const full = reply(kind, "The whole answer, in full.");
    const cut: Reply = { sse: full.sse!.slice(0, 4), cut: true };
    await using run = await runTask(kind, [cut, full], "answer");
    assert.equal(run.reason, "done");
    assert.equal(run.requests.length, 2);
    assert.deepEqual(run.requests[0].json.messages, run.requests[1].json.messages);
    assert.equal(run.events.filter((e) => e.type === "retry").length, 1);
    const answers = run.session.events.filter((e) => e.type === "assistant");
    assert.deepEqual(answers.map((e) => e.type === "assistant" && e.text), [
      "The whole answer, in full.",
    ]);
  });
}

Deno.test("loop: a stream that ends before the model finished, every time, is a provider error", async () => {
  const never: Reply = { sse: [oaChunk({ content: "half" })] };
  await assert.rejects(
    () => runTask("openai", [never, never, never], "answer"),
    /provider "fake": the stream ended before the model finished; gave up after 3 attempts/,
  );
});

Deno.test("loop: a tool result above the limit reaches the model bounded, with the spill note", async () => {
  await using run = await runTask(
    "anthropic",
    [
      anthropicReply("", [{ id: "toolu_1", name: "flood", args: { args: ["20000"] } }]),
      anthropicReply("Seen."),
    ],
    "flood",
    { limits: { said_bytes: 2048 } },
  );
  assert.equal(run.reason, "done");
  const [result] = toolResultsIn("anthropic", run.requests[1]);
  assert.ok(result.content.length < 4096, `${result.content.length} characters`);
  assert.match(result.content, /^line 1\n/);
  assert.match(result.content, /line 20000\n/);
  const spill = /(\/\S+\.out)/.exec(result.content)?.[1];
  assert.ok(spill, result.content);
  assert.ok(spill.startsWith(join(run.session.dir, "spill")), spill);
  const whole = await Deno.readTextFile(spill);
  assert.equal(whole.split("\n").length, 20001);
});

Deno.test("loop: the model reads said and the transcript holds it; shown is only displayed", async () => {
  const patch: Tool = {
    declaration: {
      name: "patch",
      description: "Apply a patch",
      parameters: { type: "object", properties: {} },
    },
    origin: { source: "tools_dir", where: "test" },
    async invoke(call) {
      await call.emit.said("patched 3 files");
      await call.emit.shown("--- a/x\n+++ b/x\n@@ the whole diff @@\n");
      return { isError: false };
    },
  };
  await using run = await runTask(
    "openai",
    [
      reply("openai", "", [{ id: "call_1", name: "patch", args: {} }]),
      reply("openai", "Patched."),
    ],
    "patch it",
    {},
    [patch],
  );
  assert.equal(run.reason, "done");
  assert.deepEqual(toolResultsIn("openai", run.requests[1]).map((r) => r.content), [
    "patched 3 files",
  ]);
  const shown = run.events.find((e) => e.type === "tool_result");
  assert.equal(shown?.shown, "--- a/x\n+++ b/x\n@@ the whole diff @@\n");
  const transcript = await Deno.readTextFile(join(run.session.dir, "transcript.jsonl"));
  assert.match(transcript, /patched 3 files/);
  assert.ok(!transcript.includes("the whole diff"));
});

Deno.test("loop: tools get MAGI_SESSION, MAGI_SESSIONS_DIR, MAGI_CONTEXT_PATH, MAGI_ATTACH_DIR", async () => {
  await using run = await runTask("openai", [
    reply("openai", "", [{ id: "call_1", name: "session-info", args: {} }]),
    reply("openai", "Known."),
  ], "where am I");
  const [result] = toolResultsIn("openai", run.requests[1]);
  const s = run.session;
  const [vars, ...mirror] = result.content.split("\n");
  assert.equal(
    vars,
    [s.id, join(s.dir, ".."), s.contextPath, join(s.dir, "attach")].join("|"),
  );
  assert.equal(mirror.slice(0, 3).join("\n"), "## user\n\nwhere am I");
});
