import assert from "node:assert/strict";
import { magi, pooled, tempDir, writeConfig } from "../helpers.ts";
import { reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig, makeTools } from "../agent/setup.ts";
import { COMMAND_SPECS } from "../../lib/cli/options.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

Deno.test("every subcommand's --help lists all its options, with an example; --version everywhere", async () => {
  await using dir = await tempDir();
  const names = Object.keys(COMMAND_SPECS).filter((name) => name !== "builtin");
  // Four magi processes at a time: each is a whole start of magi.
  const runs = await pooled(names, 4, async (name) => ({
    help: await magi([name, "--help"], { cwd: dir.path }),
    version: await magi([name, "--version"], { cwd: dir.path }),
  }));
  const helps = new Map(names.map((name, i) => [name, runs[i].help]));
  for (const [i, name] of names.entries()) {
    const { help, version } = runs[i];
    assert.equal(help.code, 0, help.stderr);
    for (const option of Object.keys(COMMAND_SPECS[name].options)) {
      assert.ok(help.stdout.includes(`--${option}`), `magi ${name} --help lacks --${option}`);
    }
    assert.match(help.stdout, /^Usage: magi /);
    assert.match(help.stdout, /Examples?:\n {2}magi /);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^magi \d+\.\d+\.\d+\n$/);
  }
  for (
    const [name, option] of [["run", "--answer"], ["call", "--as-model"], ["chat", "--max-turns"], [
      "policy",
      "--json",
    ]]
  ) {
    const help = helps.get(name)!;
    assert.ok(help.stdout.includes(option), `${name}: ${help.stdout}`);
  }
  const bad = await magi(["tools", "--bogus"], { cwd: dir.path });
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'magi: unknown option "--bogus"; --help lists the options\n');
});

Deno.test("magi config fails on a config the other commands reject", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, { policy: { disable: ["no-such-rule"] } });
  const shown = await magi(["config", "--config", config], { cwd: dir.path });
  const tools = await magi(["tools", "--config", config], { cwd: dir.path });
  assert.equal(tools.code, 2, tools.stderr);
  assert.equal(shown.code, 2, shown.stdout);
  assert.match(shown.stderr, /no default rule "no-such-rule"/);
});

Deno.test("magi sessions: list, show ID, fork ID", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await using server = scriptedServer("openai", [reply("openai", "Hello **there**.")]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const run = await magi(["run", "greet me", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: ENV,
  });
  assert.equal(run.code, 0, run.stderr);
  const list = await magi(["sessions", "list", "--config", config], { cwd: dir.path });
  const id = list.stdout.split(" ")[0];
  assert.match(list.stdout, /fake\/test-model {2}greet me/);
  const show = await magi(["sessions", "show", "last", "--config", config], { cwd: dir.path });
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^session .* — fake\/test-model/);
  assert.match(show.stdout, /> greet me\nHello \*\*there\*\*\./);
  const fork = await magi(["sessions", "fork", id, "--config", config], { cwd: dir.path });
  assert.equal(fork.code, 0, fork.stderr);
  const copy = /into (\S+)/.exec(fork.stdout)![1];
  assert.notEqual(copy, id);
  const shownCopy = await magi(["sessions", "show", copy, "--config", config], { cwd: dir.path });
  assert.match(shownCopy.stdout, /> greet me\nHello/);
  const missing = await magi(["sessions", "show", "nope", "--config", config], { cwd: dir.path });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^magi: no session "nope"/);
});

Deno.test("a provider that cannot be reached names the URL tried; the SDK's retries are told", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  // A port nothing listens on: bind one, then close it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const config = await agentConfig(dir.path, "openai", `http://127.0.0.1:${port}/v1`);
  const run = await magi(["run", "hi", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    env: ENV,
  });
  assert.equal(run.code, 1, run.stderr);
  assert.ok(
    run.stderr.includes(`tried http://127.0.0.1:${port}/v1/chat/completions`),
    run.stderr,
  );
  assert.match(run.stderr, /retrying in \d+ s \(connection failed\) 2\/3/);

  await using busy = scriptedServer("openai", [
    { status: 429, json: { error: { message: "slow down" } }, headers: { "retry-after": "1" } },
    reply("openai", "Now fine."),
  ]);
  const busyConfig = await agentConfig(dir.path, "openai", busy.url);
  const retried = await magi(["run", "hi", "--config", busyConfig, "--tools-dir", tools], {
    cwd: dir.path,
    env: ENV,
  });
  assert.equal(retried.code, 0, retried.stderr);
  assert.match(retried.stderr, /magi: retrying in 1 s \(429\) 2\/3/);
  assert.equal(retried.stdout, "Now fine.\n");
});
