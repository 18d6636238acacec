import { alive, pidsWith } from "../process/helpers.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, StreamText, tempDir } from "../helpers.ts";
import { oaChunk, reply, scriptedServer, toolResultsIn } from "./fake_provider.ts";
import {
  agentConfig,
  interruptThenGoOn,
  makeTools,
  onlySession,
  PROVIDER_ENV,
  spawnChat,
} from "./setup.ts";

Deno.test("magi chat: two requests at the prompt, /exit, then --resume keeps the conversation", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("anthropic", [
    reply("anthropic", "", [{ id: "toolu_1", name: "say", args: { args: ["hello"] } }]),
    reply("anthropic", "I said hello."),
    reply("anthropic", "Still here."),
    reply("anthropic", "I remember the hello."),
  ]);
  const config = await agentConfig(dir.path, "anthropic", server.url);
  const home = join(dir.path, "home");
  const first = await magi(["chat", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: PROVIDER_ENV,
    home,
    stdin: "say hello\n\nare you there?\n/exit\nnever sent\n",
  });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /→ say/);
  assert.match(first.stdout, /I said hello\.\n/);
  assert.match(first.stdout, /Still here\.\n/);
  assert.equal(server.requests.length, 3);
  const id = onlySession(dir.path).split("/").pop()!;

  const second = await magi(["chat", "--resume", id, "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: PROVIDER_ENV,
    home,
    stdin: "what did you say?\n",
  });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /resumed session/);
  assert.match(second.stdout, /I remember the hello\./);
  const last = server.requests[3].json.messages as { role: string }[];
  assert.deepEqual(last.map((m) => m.role), [
    "user", // say hello
    "assistant", // tool_use
    "user", // tool_result
    "assistant", // I said hello.
    "user", // are you there?
    "assistant", // Still here.
    "user", // what did you say?
  ]);
  assert.deepEqual(toolResultsIn("anthropic", server.requests[3]).map((r) => r.content), [
    "hello\n",
  ]);

  const list = await magi(["sessions", "--config", config], { cwd: dir.path, home });
  assert.equal(list.code, 0, list.stderr);
  assert.match(
    list.stdout,
    new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  fake/test-model  say hello\n$`),
  );
});

Deno.test("magi chat: Ctrl-C ends the running tool's process group, not the session", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  const marker = join(dir.path, "napping");
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_nap", name: "nap", args: { args: [marker] } }]),
    reply("openai", "Fine, awake."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const child = spawnChat(dir.path, ["--config", config, "--tools-dir", tools]);
  const stdin = child.stdin.getWriter();
  await stdin.write(new TextEncoder().encode("take a nap\n"));
  let napPid = 0;
  for (let i = 0; i < 400 && !napPid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    napPid = Number((await Deno.readTextFile(marker).catch(() => "")).trim());
  }
  assert.ok(napPid > 0, "the tool never started");
  // The pid the tool wrote is its own inside the sandbox's PID namespace: find its processes
  // here by the marker in their command lines.
  const napping = pidsWith(marker);
  assert.ok(napping.length > 0, "the tool's processes were not found");
  // The session goes on: the next request is answered.
  const stdout = await interruptThenGoOn(child, stdin);
  assert.match(stdout, /Fine, awake\./);
  // Ended (a zombie is: inside the sandbox its parent bwrap may go first).
  for (const pid of napping) {
    assert.equal(alive(pid), false, "the tool's process is still running");
  }
  const results = toolResultsIn("openai", server.requests[1]);
  assert.equal(results.length, 1);
  assert.equal(results[0].id, "call_nap");
  assert.ok(!results[0].content.includes("woke"));
});

Deno.test("magi chat asks a tool's question at the prompt", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_a", name: "confirm", args: { target: "a" } }]),
    reply("openai", "Kept a."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(["chat", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: PROVIDER_ENV,
    stdin: "delete a\nno\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\? Delete a\? \[y\]es \/ \[n\]o/);
  assert.match(run.stdout, /Kept a\./);
  const [a] = toolResultsIn("openai", server.requests[1]);
  assert.equal(a.content, "answer for a: no\n");
});

Deno.test("magi chat asks whether a call the policy asks about may run", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_1", name: "write", args: { path: "yes.txt", content: "y" } }]),
    reply("openai", "", [{ id: "call_2", name: "write", args: { path: "no.txt", content: "n" } }]),
    reply("openai", "One written, one refused."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(["chat", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: PROVIDER_ENV,
    stdin: "write two files\ny\nn\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\? allow write: .*\? \[y\]es \/ \[n\]o \/ \[a\]lways/);
  assert.equal(await Deno.readTextFile(join(dir.path, "yes.txt")), "y");
  await assert.rejects(() => Deno.stat(join(dir.path, "no.txt")));
  const [, refused] = toolResultsIn("openai", server.requests[2]);
  assert.equal(refused.id, "call_2");
  assert.match(refused.content, /refused by the person/);
});

Deno.test("magi chat: Ctrl-C cancels a model response that is still streaming", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [
    // Longer than the masker holds back (a few KiB: the longest secret shape, twice), so part
    // of it reaches the screen while it streams.
    {
      sse: [oaChunk({ content: `Let me think.${" Step by step.".repeat(400)} Still thinking` })],
      stall: true,
    },
    reply("openai", "Short answer."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const child = spawnChat(dir.path, ["--config", config]);
  const stdin = child.stdin.getWriter();
  const output = new StreamText(child.stdout);
  const errors = new StreamText(child.stderr);
  await stdin.write(new TextEncoder().encode("think hard\n"));
  // The interrupt lands once the streamed text is on the screen: the model is mid-answer.
  await output.until(/Let me think\. Step by step\./);
  assert.equal(server.requests.length, 1);
  child.kill("SIGINT");
  await stdin.write(new TextEncoder().encode("answer briefly\n/exit\n"));
  await stdin.close();
  const [status, stdout, stderr] = await Promise.all([child.status, output.done, errors.done]);
  assert.equal(status.code, 0, stderr);
  assert.match(stdout, /Let me think\.( Step by step\.)+ Still thinking\n\(interrupted\)\n/);
  assert.match(stdout, /Short answer\./);
  // The partial answer is kept, and the model is told it was interrupted.
  const messages = server.requests[1].json.messages as { role: string; content: string }[];
  assert.deepEqual(messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
  assert.match(
    messages[2].content,
    /^Let me think\.( Step by step\.)+ Still thinking\n\n\[magi: the person interrupted/,
  );
});

Deno.test("magi chat: always for a run line offers its prefix rule, for the session and saved", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_1", name: "run", args: { command: "touch made1.txt" } }]),
    reply("openai", "", [{ id: "call_2", name: "run", args: { command: "touch made2.txt" } }]),
    reply("openai", "Both made."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const xdg = join(dir.path, "xdg");
  await Deno.mkdir(join(xdg, "magi"), { recursive: true });
  const own = join(xdg, "magi", "config.jsonc");
  await Deno.writeTextFile(own, "{\n  // my own settings\n}\n");
  const run = await magi(["chat", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: { ...PROVIDER_ENV, XDG_CONFIG_HOME: xdg },
    // always; yes to `touch *` for the session; yes to saving it. The second call asks nothing.
    stdin: "make two files\na\ny\ny\n/exit\n",
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\? allow every `touch \*` for the rest of this session\?/);
  assert.match(run.stdout, /saved: \{"tool":"run","command":\["touch \*"\],"decision":"allow"\}/);
  await Deno.stat(join(dir.path, "made1.txt"));
  await Deno.stat(join(dir.path, "made2.txt"));
  const saved = await Deno.readTextFile(own);
  assert.match(saved, /\/\/ my own settings/);
  assert.match(saved, /"command": \[\s*"touch \*"\s*\]/);
  assert.equal((await Deno.stat(own)).mode! & 0o777, 0o600);
});
