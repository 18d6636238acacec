import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ShownText } from "../../lib/agent/shown_text.ts";
import { RESTART, TerminalView } from "../../lib/terminal/view.ts";
import { magi, tempDir } from "../helpers.ts";
import { type Reply, reply, scriptedServer } from "./fake_provider.ts";
import { agentConfig, makeTools, onlySession } from "./setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

/** What a screen shows of a {@link ShownText}: its text, with "|" where it started over. */
function screen() {
  const s = { out: "", shown: undefined as unknown as ShownText };
  s.shown = new ShownText({ text: (d) => (s.out += d), restart: () => (s.out += "|") });
  return s;
}

Deno.test("ShownText: a retry that repeats the cut text prints only what goes beyond it", () => {
  const s = screen();
  for (const d of ["Hel", "lo wor"]) s.shown.text(d);
  s.shown.retry();
  for (const d of ["H", "ello", " w", "orld", "."]) s.shown.text(d);
  s.shown.finish();
  assert.equal(s.out, "Hello world.");
});

Deno.test("ShownText: a retry that goes another way starts over once, at the first difference", () => {
  const s = screen();
  s.shown.text("Hello wor");
  s.shown.retry();
  for (const d of ["Hello ", "there", "."]) s.shown.text(d);
  s.shown.finish();
  assert.equal(s.out, "Hello wor|Hello there.");
});

Deno.test("ShownText: a retry that ends short of the cut text starts over", () => {
  const s = screen();
  s.shown.text("Let me check the file");
  s.shown.retry();
  s.shown.text("Let me");
  s.shown.finish();
  assert.equal(s.out, "Let me check the file|Let me");
});

Deno.test("ShownText: two cuts in a row, and a retry with no text at all", () => {
  const s = screen();
  s.shown.text("One two");
  s.shown.retry();
  s.shown.text("One");
  s.shown.retry();
  s.shown.text("One two three");
  s.shown.finish();
  assert.equal(s.out, "One two three");
  const t = screen();
  t.shown.text("Let me look");
  t.shown.retry();
  t.shown.finish(); // the answer is only a tool call
  assert.equal(t.out, "Let me look|");
  const u = screen();
  u.shown.retry(); // cut before any text
  u.shown.text("Fresh.");
  u.shown.finish();
  assert.equal(u.out, "Fresh.");
});

Deno.test("TerminalView: a retry note mid-answer keeps stdout to the answer; chat shares one stream", () => {
  const run = { out: "", err: "" };
  const view = new TerminalView({
    json: false,
    out: (t) => (run.out += t),
    info: (t) => (run.err += t),
    fancy: false,
  });
  view.text("Hello wor");
  view.retry("cut; retrying (2/3)");
  view.retry("cut again; retrying (3/3)");
  view.text("ld.");
  view.answer("Hello world.");
  assert.equal(run.out, "Hello world.\n");
  assert.equal(run.err, "\nmagi: cut; retrying (2/3)\nmagi: cut again; retrying (3/3)\n");

  let chat = "";
  const out = (t: string) => (chat += t);
  const chatView = new TerminalView({ json: false, out, info: out, fancy: false });
  chatView.text("Hello wor");
  chatView.retry("cut; retrying (2/3)");
  chatView.restart();
  chatView.text("Goodbye.");
  chatView.answer("Goodbye.");
  assert.equal(chat, `Hello wor\nmagi: cut; retrying (2/3)\n${RESTART}\nGoodbye.\n`);
});

/** The first `keep` frames of `full`, then the connection drops. */
function cutAfter(full: Reply, keep: number): Reply {
  return { sse: full.sse!.slice(0, keep), cut: true };
}

/** The assistant and tool_result events of the only session's transcript. */
async function recorded(dir: string) {
  const transcript = await Deno.readTextFile(join(onlySession(dir), "transcript.jsonl"));
  return transcript.trim().split("\n").map((l) => JSON.parse(l))
    .filter((e) => e.type === "assistant" || e.type === "tool_result")
    .map(({ at: _at, ...e }) => e);
}

for (const kind of ["openai", "anthropic"] as const) {
  // Text comes in pieces of 7 characters; the frames before the first text frame:
  const head = kind === "openai" ? 1 : 3;

  Deno.test(`magi run (${kind}): a cut stream's text is not printed again by the retry`, async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const full = reply(kind, "Hello world, all is well.");
    await using server = scriptedServer(kind, [cutAfter(full, head + 2), full]);
    const config = await agentConfig(dir.path, kind, server.url);
    const run = await magi(["run", "greet", "--config", config, "--tools-dir", tools], {
      cwd: dir.path,
      env: ENV,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 2);
    assert.equal(run.stdout, "Hello world, all is well.\n");
    assert.match(
      run.stderr,
      /^magi: provider "fake": the stream was cut: .*; retrying \(2\/3\)$/m,
    );
    assert.ok(!run.stderr.includes(RESTART), run.stderr);
    assert.deepEqual(await recorded(dir.path), [
      { type: "assistant", text: "Hello world, all is well.", tool_calls: [] },
    ]);
  });

  Deno.test(`magi run (${kind}): a retry that answers differently is marked as starting over`, async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    await using server = scriptedServer(kind, [
      cutAfter(reply(kind, "Hello world, all is well."), head + 2),
      reply(kind, "Hello there. All is well."),
    ]);
    const config = await agentConfig(dir.path, kind, server.url);
    const run = await magi(["run", "greet", "--config", config, "--tools-dir", tools], {
      cwd: dir.path,
      env: ENV,
    });
    assert.equal(run.code, 0, run.stderr);
    // Piped, an answer is written once its attempt finished: the cut text is not left behind.
    assert.equal(run.stdout, "Hello there. All is well.\n");
    assert.match(run.stderr, /retrying \(2\/3\)\n/);
    assert.ok(!run.stderr.includes(RESTART), run.stderr);
    assert.deepEqual(await recorded(dir.path), [
      { type: "assistant", text: "Hello there. All is well.", tool_calls: [] },
    ]);
  });

  Deno.test(`magi run (${kind}): a tool call in a cut stream is never run`, async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const flag = join(dir.path, "flag");
    const partial = reply(kind, "Let me touch it.", [
      { id: "call_t", name: "touch-file", args: { args: [flag] } },
    ]);
    // Everything but the stop reason: the call's name and whole arguments were streamed.
    const tail = kind === "openai" ? 3 : 2;
    await using server = scriptedServer(kind, [
      cutAfter(partial, partial.sse!.length - tail),
      reply(kind, "Let me touch it. On second thought, there is no need."),
    ]);
    const config = await agentConfig(dir.path, kind, server.url);
    const run = await magi(["run", "touch it", "--config", config, "--tools-dir", tools], {
      cwd: dir.path,
      env: ENV,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 2);
    assert.deepEqual(server.requests[1].json.messages, server.requests[0].json.messages);
    assert.equal(existsSync(flag), false, "the cut stream's tool call ran");
    assert.ok(!run.stderr.includes("touch-file"), run.stderr);
    assert.equal(run.stdout, "Let me touch it. On second thought, there is no need.\n");
    assert.deepEqual(await recorded(dir.path), [
      {
        type: "assistant",
        text: "Let me touch it. On second thought, there is no need.",
        tool_calls: [],
      },
    ]);
  });
}
