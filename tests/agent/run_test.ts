import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, magiCommand, tempDir } from "../helpers.ts";
import { pidsWith } from "../process/helpers.ts";
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
    const events = transcript.trim().split("\n").map((l) => JSON.parse(l));
    const types = events.map((e) => e.type);
    // Recorded as they finished: touch-file before the wait-for it released.
    assert.deepEqual(events.filter((e) => e.type === "tool_result").map((e) => e.id), [
      "call_t",
      "call_w",
      "call_s",
    ]);
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

Deno.test("magi run: secrets in a tool's output and in the environment never reach the provider", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  const token = "tok-5f3a9c1e-only-in-env";
  const access = "llm-access-7c2d-value";
  await using server = scriptedServer("openai", [
    reply("openai", "Checking.", [
      { id: "call_1", name: "print-env", args: { args: ["MY_API_TOKEN"] } },
      { id: "call_2", name: "print-env", args: { args: ["LLM_ACCESS"] } },
    ]),
    reply("openai", "Both variables are set."),
  ]);
  // LLM_ACCESS does not look like a credential's name: it is masked because it holds the key.
  // (A tool sees the provider's key only when config secrets.pass_env names it.)
  const config = await agentConfig(
    dir.path,
    "openai",
    server.url,
    { secrets: { pass_env: ["LLM_ACCESS"] } },
    "LLM_ACCESS",
  );
  const run = await magi(
    ["run", `check that ${token} is set`, "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: { MY_API_TOKEN: token, LLM_ACCESS: access } },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[0].headers.authorization, `Bearer ${access}`);
  for (const request of server.requests) {
    assert.ok(!request.body.includes(token), "the token reached the provider");
    assert.ok(!request.body.includes(access), "the API key reached a request body");
  }
  assert.match(server.requests[0].body, /check that \$MY_API_TOKEN is set/);
  assert.deepEqual(toolResultsIn("openai", server.requests[1]).map((r) => r.content), [
    "$MY_API_TOKEN\n",
    "$LLM_ACCESS\n",
  ]);
  const session = onlySession(dir.path);
  for (const file of ["transcript.jsonl", "context.md"]) {
    const text = await Deno.readTextFile(join(session, file));
    assert.ok(!text.includes(token) && !text.includes(access), `a secret is in ${file}`);
  }
  assert.ok(!run.stdout.includes(token) && !run.stderr.includes(token));
  assert.ok(!run.stdout.includes(access) && !run.stderr.includes(access));
});

Deno.test("magi run --json prints one event per line", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_1", name: "say", args: { args: ["hi"] } }]),
    reply("openai", "Said hi."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(
    ["run", "say hi", "--json", "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: ENV },
  );
  assert.equal(run.code, 0, run.stderr);
  const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => e.type), [
    "session",
    "usage",
    "tool_call",
    "tool_result",
    "text",
    "usage",
    "end",
  ]);
  assert.deepEqual(events[2], {
    type: "tool_call",
    id: "call_1",
    name: "say",
    arguments: '{"args":["hi"]}',
  });
  assert.equal(events[3].said, "hi\n");
  assert.equal(events[3].shown, "hi\n");
  assert.equal(events[3].is_error, false);
  assert.equal(events[4].text, "Said hi.");
  assert.deepEqual(events[6], { type: "end", reason: "done", session: events[0].id });
  assert.equal(run.stderr, "");
});

Deno.test("magi run --max-turns stops a model that never finishes, with a non-zero exit", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer(
    "openai",
    (i) => reply("openai", "", [{ id: `call_${i}`, name: "say", args: { args: ["again"] } }]),
  );
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(
    ["run", "loop forever", "--max-turns", "2", "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: ENV },
  );
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.requests.length, 2);
  assert.match(run.stderr, /stopped after --max-turns 2 model requests/);
});

Deno.test("magi run: a provider that refuses ends the run with exit 1 and a clear error", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("anthropic", () => ({
    status: 400,
    json: { type: "error", error: { type: "invalid_request_error", message: "no such model" } },
  }));
  const config = await agentConfig(dir.path, "anthropic", server.url);
  const run = await magi(["run", "hello", "--config", config], { cwd: dir.path, env: ENV });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /provider "fake": HTTP 400: no such model/);
});

/**
 * Starts `magi run "take a nap"` (the model calls `nap`), waits until the tool runs, then
 * kills magi with SIGKILL mid-turn and ends the nap. Returns the home folder magi used.
 */
async function napThenKill(
  dir: string,
  tools: string,
  marker: string,
  config: string,
): Promise<string> {
  const home = join(dir, "home");
  const child = magiCommand(["run", "take a nap", "--config", config, "--tools-dir", tools], {
    cwd: dir,
    env: {
      ...ENV,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
  }).spawn();
  let napPid = 0;
  for (let i = 0; i < 400 && !napPid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    napPid = Number((await Deno.readTextFile(marker).catch(() => "")).trim());
  }
  assert.ok(napPid > 0, "the tool never started");
  child.kill("SIGKILL");
  await child.status;
  for (const pid of pidsWith(marker)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
  return home;
}

/**
 * A session of `magi run "take a nap"` killed mid-turn ({@link napThenKill}); the scripted
 * server says "Napping first." with the `nap` call, then answers the resumed request with
 * `then`. Disposing closes the server.
 */
async function killedMidNap(dir: string, then: string) {
  const tools = await makeTools(dir);
  const marker = join(dir, "napping");
  const server = scriptedServer("openai", [
    reply("openai", "Napping first.", [{ id: "call_nap", name: "nap", args: { args: [marker] } }]),
    reply("openai", then),
  ]);
  try {
    const config = await agentConfig(dir, "openai", server.url);
    const home = await napThenKill(dir, tools, marker, config);
    return {
      tools,
      config,
      home,
      server,
      [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
    };
  } catch (error) {
    await server[Symbol.asyncDispose]();
    throw error;
  }
}

Deno.test("magi run --resume continues a session killed with SIGKILL mid-turn", async () => {
  await using dir = await tempDir();
  await using killed = await killedMidNap(dir.path, "Resumed and finished.");
  const { tools, config, home, server } = killed;

  const session = onlySession(dir.path);
  const transcript = join(session, "transcript.jsonl");
  await Deno.writeTextFile(transcript, '{"type":"usage","at":"2026-', { append: true });
  const run = await magi(
    ["run", "--resume", session.split("/").pop()!, "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: ENV, home },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /ignored a half-written last line/);
  assert.match(run.stdout, /Resumed and finished\./);
  const messages = server.requests[1].json.messages as Record<string, unknown>[];
  assert.deepEqual(messages.slice(1).map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(messages[1].content, "take a nap");
  assert.equal(messages[2].content, "Napping first.");
  assert.match(messages[3].content as string, /did not finish/);
  const lines = (await Deno.readTextFile(transcript)).trim().split("\n");
  assert.ok(lines.every((l) => JSON.parse(l)), "every line of the transcript is JSON");

  const again = await magi(["run", "--resume", "last", "--config", config], {
    cwd: dir.path,
    env: ENV,
    home,
  });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /is finished; give a task to go on/);
});

Deno.test("magi run --resume ID TEXT after SIGKILL sends the unfinished call's result before the new text", async () => {
  await using dir = await tempDir();
  await using killed = await killedMidNap(dir.path, "Going on.");
  const { tools, config, home, server } = killed;
  const id = onlySession(dir.path).split("/").pop()!;
  const run = await magi(
    ["run", "--resume", id, "and then?", "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: ENV, home },
  );
  assert.equal(run.code, 0, run.stderr);
  const messages = server.requests[1].json.messages as Record<string, unknown>[];
  assert.deepEqual(messages.slice(1).map((m) => m.role), ["user", "assistant", "tool", "user"]);
  assert.equal(messages[4].content, "and then?");
});

Deno.test("magi run --answer answers a tool's question; with none left it is an error result", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_a", name: "confirm", args: { target: "a" } }]),
    reply("openai", "", [{ id: "call_b", name: "confirm", args: { target: "b" } }]),
    reply("openai", "Deleted a, not b."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(
    ["run", "delete a and b", "--answer", "yes", "--config", config, "--tools-dir", tools],
    { cwd: dir.path, env: ENV },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /\? Delete a\? \[y\]es \/ \[n\]o → yes/);
  const [a] = toolResultsIn("openai", server.requests[1]);
  assert.equal(a.content, "answer for a: yes\n");
  const [, b] = toolResultsIn("openai", server.requests[2]);
  assert.match(b.content, /Delete b\?/);
  assert.match(
    b.content,
    /no answer was given \(`magi run` has no one to ask: .*`--answer TEXT`, none left\)/,
  );
  assert.ok(!b.content.includes("magi call"), b.content);
});
