import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../lib/config/load.ts";
import { magi, tempDir } from "../helpers.ts";
import { pidsWith } from "../process/helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig, onlySession } from "../agent/setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

Deno.test("magi run: a before_tool hook that denies rm stops the call; the model reads why", async () => {
  await using dir = await tempDir();
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await Deno.writeTextFile(join(work, "victim"), "keep me\n");
  const seen = join(work, "seen.jsonl");
  const deny = join(dir.path, "deny-rm.sh");
  await Deno.writeTextFile(
    deny,
    `#!/bin/sh
input=$(cat)
printf '%s\\n' "$input" >> '${seen}'
case "$input" in *'"command":"rm '*) echo "rm is not allowed here: move files to trash/" >&2; exit 2;; esac
exit 0
`,
  );
  await Deno.chmod(deny, 0o755);
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "c1", name: "run", args: { command: "rm victim" } }]),
    reply("openai", "I was not allowed to remove it."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    hooks: {
      before_tool: [{ matcher: "run|write", command: deny }],
      // A broken hook and a hanging one cost only themselves.
      after_tool: [
        { command: "echo 'hook is broken' >&2; exit 1" },
        { command: "sleep 31.25", timeout_seconds: 1 },
      ],
    },
  });
  const run = await magi(["run", "remove victim", "--auto", "--config", config], {
    cwd: work,
    env: ENV,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(await Deno.readTextFile(join(work, "victim")), "keep me\n");
  const [result] = toolResultsIn("openai", server.requests[1]);
  assert.equal(
    result.content,
    "[magi: a before_tool hook refused the call: rm is not allowed here: move files to trash/]\n",
  );
  // The event in Claude Code's hook shape.
  const event = JSON.parse((await Deno.readTextFile(seen)).trim().split("\n")[0]);
  const session = onlySession(dir.path);
  assert.deepEqual(event, {
    session_id: session.split("/").at(-1),
    transcript_path: join(session, "transcript.jsonl"),
    cwd: work,
    hook_event_name: "PreToolUse",
    tool_name: "run",
    tool_input: { command: "rm victim" },
  });
  // A refused call runs no after_tool hook: neither line.
  assert.ok(!run.stderr.includes("hook after_tool"), run.stderr);
});

Deno.test("magi run: hooks may approve an ask but not a deny rule; broken and hanging hooks are one line each", async () => {
  await using dir = await tempDir();
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await Deno.writeTextFile(join(work, "victim"), "keep me\n");
  await using server = scriptedServer("openai", [
    reply("openai", "", [
      { id: "c1", name: "run", args: { command: "touch made" } },
      { id: "c2", name: "run", args: { command: "rm victim" } },
    ]),
    reply("openai", "Done what I could."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    policy: { rules: [{ tool: "run", command: "rm *", decision: "deny", reason: "no rm" }] },
    hooks: {
      before_tool: [{ command: `echo '{"decision": "allow"}'` }],
      after_tool: [
        { matcher: "run", command: "echo 'hook is broken' >&2; exit 1" },
        { command: "sleep 31.25", timeout_seconds: 1 },
      ],
    },
  });
  const run = await magi(["run", "touch and remove", "--config", config], { cwd: work, env: ENV });
  assert.equal(run.code, 0, run.stderr);
  const results = toolResultsIn("openai", server.requests[1]);
  assert.equal(results[0].content, "(no output)\n");
  assert.ok(Deno.statSync(join(work, "made")).isFile);
  assert.match(results[1].content, /denied by the policy/);
  assert.equal(await Deno.readTextFile(join(work, "victim")), "keep me\n");
  const lines = run.stderr.split("\n");
  assert.equal(
    lines.filter((l) => l.includes('hook after_tool "echo') && l.includes("exited 1")).length,
    2,
    run.stderr,
  );
  assert.equal(
    lines.filter((l) => l.includes('"sleep 31.25" ran past its 1 s limit')).length,
    2,
    run.stderr,
  );
  assert.deepEqual(pidsWith("sleep 31.25"), []);
});

Deno.test("magi run: session_start sees the session; user_prompt holds a task back with its reason", async () => {
  await using dir = await tempDir();
  const seen = join(dir.path, "started.json");
  await using server = scriptedServer("openai", [reply("openai", "Hello.")]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    hooks: {
      session_start: [{ command: `cat > '${seen}'` }],
      user_prompt: [{
        command: `grep -q launch && { echo "no launches on Fridays" >&2; exit 2; }; exit 0`,
      }],
    },
  });
  const held = await magi(["run", "launch the rocket", "--config", config], {
    cwd: dir.path,
    env: ENV,
  });
  assert.equal(held.code, 2, held.stderr);
  assert.match(held.stderr, /a user_prompt hook held the text back: no launches on Fridays/);
  assert.equal(server.requests.length, 0);
  const started = JSON.parse(await Deno.readTextFile(seen));
  assert.equal(started.hook_event_name, "SessionStart");
  assert.equal(started.source, "startup");
  assert.match(started.session_id, /^\d{8}-\d{6}-/);
  const ok = await magi(["run", "say hello", "--config", config], { cwd: dir.path, env: ENV });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /Hello\./);
});

Deno.test("loadConfig(): a project's hooks count only when the person trusts the project", async () => {
  await using dir = await tempDir();
  const project = join(dir.path, "project");
  await Deno.mkdir(join(project, ".magi"), { recursive: true });
  const hooks = { before_tool: [{ command: "true" }] };
  await Deno.writeTextFile(join(project, ".magi", "config.jsonc"), JSON.stringify({ hooks }));
  const env = { XDG_CONFIG_HOME: join(dir.path, "config") };
  const untrusted = loadConfig({ cwd: project, env });
  assert.deepEqual(untrusted.values.hooks, {});
  assert.match(untrusted.notes.join("\n"), /ignored "hooks"/);
  await Deno.mkdir(join(dir.path, "config", "magi"), { recursive: true });
  await Deno.writeTextFile(
    join(dir.path, "config", "magi", "config.jsonc"),
    JSON.stringify({ trusted_projects: [project] }),
  );
  assert.deepEqual(loadConfig({ cwd: project, env }).values.hooks, hooks);
});

Deno.test("magi chat: a user_prompt hook holds one line back and the chat goes on", async () => {
  await using dir = await tempDir();
  await using server = scriptedServer("openai", [reply("openai", "Hi there.")]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    hooks: {
      user_prompt: [{
        command: `grep -q launch && { echo "no launches on Fridays" >&2; exit 2; }; exit 0`,
      }],
    },
  });
  const chat = await magi(["chat", "--config", config], {
    cwd: dir.path,
    env: ENV,
    stdin: "launch the rocket\nsay hi\n/exit\n",
  });
  assert.equal(chat.code, 0, chat.stderr);
  assert.match(chat.stdout + chat.stderr, /a user_prompt hook held the text back: no launches/);
  assert.match(chat.stdout, /Hi there\./);
  assert.equal(server.requests.length, 1);
  assert.ok(!server.requests[0].body.includes("rocket"));
});
