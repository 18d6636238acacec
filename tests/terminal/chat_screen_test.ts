/**
 * `magi chat` on a real terminal (tmux), against a scripted provider on loopback: what the
 * person sees — the status line, then the answer rendered as markdown; a prompt never
 * drawn over while a slow tool runs; /help; Ctrl-C mid-stream recorded; and `magi run`'s
 * status line while the SDK retries.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { OA_DONE, oaChunk, reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig, makeTools, onlySession } from "../agent/setup.ts";
import { INTERRUPTED_NOTE } from "../../lib/agent/session.ts";
import { hasTmux, magiInPane, Pane } from "./tmux.ts";

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking · \d+s/;

function gate(): { until: Promise<void>; open: () => void } {
  let open = () => {};
  const until = new Promise<void>((r) => (open = r));
  return { until, open };
}

/** `magi COMMAND --config CONFIG --tools-dir TOOLS` started in a tmux pane in `dir`. */
async function inPane(
  command: "chat" | "run",
  dir: string,
  config: string,
  tools: string,
  args: string[] = [],
) {
  const pane = magiInPane([command, ...args, "--config", config, "--tools-dir", tools], dir);
  return await Pane.start(pane.command, { cwd: dir, env: pane.env });
}

async function chat(dir: string, config: string, tools: string) {
  const pane = await inPane("chat", dir, config, tools);
  await pane.waitFor(/^> $/m);
  return pane;
}

/** A test that drives `magi chat` in tmux (skipped without tmux; the pane outlives its ops). */
function tmuxTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !hasTmux, sanitizeResources: false, sanitizeOps: false, fn });
}

tmuxTest(
  "magi chat on a terminal: a spinner while the model works, then the answer as markdown",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const slow = gate();
    const answer = reply(
      "openai",
      "# Plan\n\nThis is **bold** and `code`.\n\n```js\nconst x = 1;\n```\n",
    );
    await using server = scriptedServer("openai", [{
      ...answer,
      pause: { after: 0, until: slow.until },
    }]);
    const config = await agentConfig(dir.path, "openai", server.url);
    await using pane = await chat(dir.path, config, tools);
    await pane.keys("make a plan", "Enter");
    await pane.waitFor(SPINNER);
    slow.open();
    const screen = await pane.waitFor(/const x = 1;[\s\S]*tokens: /);
    assert.match(screen, /This is bold and code\./, "markdown rendered: no ** or backticks");
    assert.doesNotMatch(screen, /\*\*bold\*\*/);
    assert.doesNotMatch(screen, /```/);
    const styled = await pane.screen(true);
    assert.ok(styled.includes("\x1b[1mbold"), "bold is bold");
    assert.doesNotMatch(await pane.screen(), SPINNER, "the status line went when the answer came");
  },
);

tmuxTest(
  "magi chat on a terminal: a question's prompt is not drawn over while a slow tool runs",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const flag = join(dir.path, "go");
    await using server = scriptedServer("openai", [
      reply("openai", "", [
        { id: "call_1", name: "wait-for", args: { args: [flag] } },
        { id: "call_2", name: "confirm", args: { target: "it" } },
      ]),
      reply("openai", "All done."),
    ]);
    const config = await agentConfig(dir.path, "openai", server.url);
    await using pane = await chat(dir.path, config, tools);
    await pane.keys("do it", "Enter");
    await pane.waitFor(/Delete it\? \[y\]es \/ \[n\]o\n+answer> $/m);
    // The status line (running wait-for) ticks every 80 ms; the prompt must stay.
    await pane.waitFor(/running/).catch(() => {});
    await pane.keys("y", "Enter");
    await Deno.writeTextFile(flag, "");
    const screen = await pane.waitFor(/All done\./);
    assert.match(screen, /^answer> y$/m, "the typed answer sits on the intact prompt");
    assert.match(screen, /answer for it: yes/, "y answers a yes/no question");
    assert.match(screen, /saw /);
  },
);

tmuxTest("magi chat on a terminal: /help lists the commands; Tab completes them", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", []);
  const config = await agentConfig(dir.path, "openai", server.url);
  await using pane = await chat(dir.path, config, tools);
  await pane.keys("/help", "Enter");
  const screen = await pane.waitFor(/\/exit/);
  for (
    const c of [
      "/help",
      "/model",
      "/compact",
      "/clear",
      "/sessions",
      "/resume ID",
      "/tools",
      "/cost",
      "/last",
    ]
  ) {
    assert.ok(screen.includes(c), `${c} in /help:\n${screen}`);
  }
  // Tab completes a unique name (the choices of an ambiguous one: tests/terminal/parts_test.ts).
  await pane.keys("/cos");
  await pane.keys("", "Tab");
  await pane.waitFor(/^> \/cost $/m);
  await pane.keys("", "Enter");
  await pane.waitFor(/tokens this session: 0 in · 0 out/);
  assert.equal(server.requests.length, 0, "slash commands are not sent to the model");
});

tmuxTest(
  "magi chat on a terminal: Ctrl-C mid-stream keeps the partial answer, marked; the model is told",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const never = gate();
    const partial = {
      sse: [
        oaChunk({ role: "assistant", content: "First paragraph.\n\n" }),
        oaChunk({ content: "Second, cut" }),
        oaChunk({ content: " here." }, "stop"),
        OA_DONE,
      ],
      pause: { after: 2, until: never.until },
    };
    await using server = scriptedServer("openai", [partial, reply("openai", "Understood.")]);
    const config = await agentConfig(dir.path, "openai", server.url);
    await using pane = await chat(dir.path, config, tools);
    await pane.keys("write two paragraphs", "Enter");
    await pane.waitFor(/First paragraph\./);
    await pane.keys("", "C-c");
    await pane.waitFor(/\(interrupted\)[\s\S]*^> $/m);
    await pane.keys("go on", "Enter");
    await pane.waitFor(/Understood\./);
    never.open();
    const events = (await Deno.readTextFile(join(onlySession(dir.path), "transcript.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    const cut = events.find((e) => e.type === "assistant" && e.interrupted);
    assert.ok(cut, JSON.stringify(events));
    assert.match(cut.text, /^First paragraph\.\n\nSecond, cut$/);
    const sent = JSON.stringify(server.requests[1].json.messages);
    assert.ok(sent.includes(INTERRUPTED_NOTE.slice(0, 40)), sent);
  },
);

tmuxTest(
  "magi chat on a terminal: a retried answer that starts over leaves no abandoned text",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const cut = {
      sse: [
        oaChunk({ role: "assistant", content: "Abandoned paragraph.\n\n" }),
        oaChunk({ content: "More of it" }),
      ],
      cut: true,
    };
    await using server = scriptedServer("openai", [cut, reply("openai", "The real answer.")]);
    const config = await agentConfig(dir.path, "openai", server.url);
    await using pane = await chat(dir.path, config, tools);
    await pane.keys("answer", "Enter");
    const screen = await pane.waitFor(/The real answer\.[\s\S]*tokens: /);
    assert.doesNotMatch(screen, /Abandoned|More of it/);
    assert.match(screen, /retrying \(2\/3\)/);
  },
);

tmuxTest(
  "magi chat on a terminal: a tool's output is cut at display.lines; /last shows it all",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    await using server = scriptedServer("openai", [
      reply("openai", "", [{ id: "call_1", name: "flood", args: { args: ["30"] } }]),
      reply("openai", "Flooded."),
    ]);
    const config = await agentConfig(dir.path, "openai", server.url, { display: { lines: 5 } });
    await using pane = await chat(dir.path, config, tools);
    await pane.keys("flood", "Enter");
    const screen = await pane.waitFor(/Flooded\./);
    assert.match(screen, /^line 5$/m);
    assert.doesNotMatch(screen, /^line 6$/m);
    const more = /… 25 more lines — full: (\S+)/.exec(screen);
    assert.ok(more, screen);
    assert.match(await Deno.readTextFile(more[1]), /line 30\n$/);
    await pane.keys("/last", "Enter");
    await pane.waitFor(/^line 30$/m);
  },
);

tmuxTest(
  "magi run on a terminal: the status line's retry wait goes once the retry is sent",
  async () => {
    await using dir = await tempDir();
    const tools = await makeTools(dir.path);
    const slow = gate();
    // magi's guess of the wait is only a guess: here it reads 30 s (`retry-after`, since it
    // takes "100ms" for no number) while the SDK waits 0.1 s (it reads the leading 100).
    const busy = {
      status: 429,
      headers: { "retry-after-ms": "100ms", "retry-after": "30" },
      json: { error: { message: "slow down" } },
    };
    await using server = scriptedServer("openai", [
      busy,
      { ...reply("openai", "The answer."), pause: { after: 0, until: slow.until } },
    ]);
    const config = await agentConfig(dir.path, "openai", server.url);
    await using pane = await inPane("run", dir.path, config, tools, ["answer"]);
    await pane.waitFor(/retrying in \d+ s \(429\)/);
    // The retry is under way (its answer held back): the line no longer counts down to it.
    await pane.waitFor(/thinking · \d+s · Ctrl-C to stop/, 10_000);
    assert.equal(server.requests.length, 2);
    slow.open();
    // magi's last line (waiting for tmux to mark the pane dead raced: tmux sometimes leaves
    // the ended magi a zombie for a long while).
    const screen = await pane.waitFor(/magi: session \S+/);
    assert.match(screen, /The answer\.\n/);
    assert.doesNotMatch(screen, /retrying/);
  },
);
