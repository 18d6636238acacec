import assert from "node:assert/strict";
import { join } from "node:path";
import { MAX_QUESTIONS } from "../../lib/pipeline/ask.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import type { Question } from "../../lib/core/types.ts";
import { magi, REPO, tempDir, TESTDATA, testRuntime, writeConfig } from "../helpers.ts";

const ASK = join(TESTDATA, "lua", "ask");
const ASK_TOOLS = join(TESTDATA, "ask-tools");

async function askConfig(dir: string): Promise<string> {
  return await writeConfig(dir, {
    lua_dirs: [ASK],
    tools_dir: [ASK_TOOLS],
    peers: { testpeer: join(TESTDATA, "peers", "test-peer") },
    shipped_tools: false,
  });
}

Deno.test("magi call --answer answers a Lua tool's question; args.answered carries it", async () => {
  await using dir = await tempDir();
  const config = await askConfig(dir.path);
  const run = await magi(["call", "--json", "--config", config, "--answer", "blue", "lua_ask"], {
    cwd: dir.path,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).said, "colour: blue");
});

Deno.test("a question with no way to ask (non-interactive, no --answer) is an error result saying what was asked", async () => {
  await using dir = await tempDir();
  const config = await askConfig(dir.path);
  const run = await magi(["call", "--json", "--config", config, "lua_ask"], { cwd: dir.path });
  assert.equal(run.code, 1);
  const r = JSON.parse(run.stdout);
  assert.equal(r.is_error, true);
  assert.match(
    r.said,
    /the tool asked "Which colour\?" \(choices: "red", "blue"\) and no answer was given/,
  );
  assert.match(r.said, /\(no terminal to ask on; `magi call --answer TEXT` supplies one\)/);
});

Deno.test("a tool that asks twice in a row gets the --answer values in order", async () => {
  await using dir = await tempDir();
  const config = await askConfig(dir.path);
  const run = await magi([
    "call",
    "--json",
    "--config",
    config,
    "--answer",
    "red",
    "--answer",
    "sure:red",
    "lua_ask_twice",
    '{"item":"the bike"}',
  ], { cwd: dir.path });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const r = JSON.parse(run.stdout);
  assert.equal(r.said, "red");
  assert.equal(r.shown, "picked red");
});

Deno.test("a tools_dir tool asks through $MAGI_ASK and reads the answer from $MAGI_ANSWERED", async () => {
  await using dir = await tempDir();
  const config = await askConfig(dir.path);
  const run = await magi(
    ["call", "--json", "--config", config, "--answer", "yes", "confirm", '{"args":["deploy"]}'],
    { cwd: dir.path },
  );
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.equal(JSON.parse(run.stdout).said, "answered: yes\n");
});

Deno.test("questions in-process: the asked text, choices, wrong answers, forged answers, endless asking", async () => {
  await using t = await testRuntime({
    config: {
      lua_dirs: [ASK],
      tools_dir: [ASK_TOOLS],
      peers: { testpeer: join(TESTDATA, "peers", "test-peer") },
      shipped_tools: false,
    },
  });
  const asked: Question[] = [];
  const answer = (reply: string) => (q: Question) => {
    asked.push(q);
    return Promise.resolve(reply);
  };

  const confirm = await runTool(t.rt, {
    name: "confirm",
    args: { args: ["it all"] },
    answer: answer("no"),
  });
  assert.equal(confirm.said, "answered: no\n");
  assert.deepEqual(asked.pop(), { question: "Really do it all?", choices: ["yes", "no"] });

  const wrong = await runTool(t.rt, { name: "lua_ask", args: {}, answer: answer("green") });
  assert.equal(wrong.is_error, true);
  assert.match(wrong.said, /the answer "green" to "Which colour\?" .* is not one of the choices/);

  const peer = await runTool(t.rt, { name: "casper_ask", args: {}, answer: answer("red") });
  assert.equal(peer.said, 'chose {"answered":"red"}\n');

  const forged = await runTool(t.rt, { name: "lua_ask", args: { answered: "red" } });
  assert.equal(forged.is_error, true, "an answer from the caller's arguments must not count");

  asked.length = 0;
  const endless = await runTool(t.rt, { name: "lua_ask_forever", args: {}, answer: answer("y") });
  assert.equal(endless.is_error, true);
  assert.match(endless.said, new RegExp(`asked more than ${MAX_QUESTIONS} questions`));
  assert.equal(asked.length, MAX_QUESTIONS);
});

Deno.test({
  name: "on a terminal without --answer, magi call asks the person; a number picks a choice",
  ignore: !hasScript(),
  fn: async () => {
    await using dir = await tempDir();
    const config = await askConfig(dir.path);
    const command = [
      `XDG_CONFIG_HOME=${dir.path}/config XDG_CACHE_HOME=${dir.path}/cache`,
      `XDG_STATE_HOME=${dir.path}/state NO_COLOR=1`,
      `deno run -A --quiet ${join(REPO, "main.ts")} call --config ${config} lua_ask`,
    ].join(" ");
    // `script` gives magi a terminal; the person types "2".
    const child = new Deno.Command("script", {
      args: ["-qec", `env ${command}`, "/dev/null"],
      cwd: dir.path,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("2\n"));
    await writer.close();
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout).replaceAll("\r", "");
    assert.equal(out.code, 0, text);
    // One prompt style (lib/terminal/choice.ts): a choice by its letter, word or number.
    assert.match(text, /\? Which colour\? \[r\]ed \/ \[b\]lue\nanswer> /);
    assert.match(text, /colour: blue\n/);
  },
});

function hasScript(): boolean {
  try {
    return new Deno.Command("script", { args: ["--version"] }).outputSync().success;
  } catch {
    return false;
  }
}
