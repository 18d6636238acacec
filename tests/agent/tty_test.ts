import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, REPO, StreamText, tempDir } from "../helpers.ts";
import { reply, scriptedServer } from "./fake_provider.ts";
import { agentConfig, script } from "./setup.ts";

/** util-linux `script` gives magi a terminal; without it the test has nothing to run on. */
const hasScript = new Deno.Command("sh", { args: ["-c", "command -v script"] }).outputSync()
  .success;

async function onTerminal(noColor: boolean): Promise<string> {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  const flag = join(dir.path, "shown");
  await makeTool(
    tools,
    "slow",
    // It runs until the test has seen it shown as running (the flag), 20 s at the most.
    script(
      "slow — take a while",
      "slow",
      `i=0; while [ ! -e '${flag}' ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done
echo "slow done"`,
    ),
  );
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "call_1", name: "slow", args: {} }]),
    reply("openai", "Finished."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url);
  const magi = ["deno", "run", "-A", "--quiet", "--config", join(REPO, "deno.json")]
    .concat([join(REPO, "main.ts"), "run", "go", "--config", config, "--tools-dir", tools])
    .map((a) => `'${a}'`).join(" ");
  const env: Record<string, string> = {
    FAKE_PROVIDER_KEY: "fake-provider-key-0001",
    XDG_CACHE_HOME: join(dir.path, "cache"),
    XDG_STATE_HOME: join(dir.path, "state"),
    TERM: "xterm",
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir.path,
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir) env.DENO_DIR = denoDir;
  if (noColor) env.NO_COLOR = "1";
  const child = new Deno.Command("script", {
    args: ["-qec", magi, "/dev/null"],
    cwd: dir.path,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const screen = new StreamText(child.stdout);
  const errors = new StreamText(child.stderr);
  // The tool is shown running (a progress line on a terminal; its call line with NO_COLOR).
  await screen.until(noColor ? /→ slow/ : /running slow · \ds/).finally(() =>
    Deno.writeTextFile(flag, "")
  );
  const [status, text, stderr] = await Promise.all([child.status, screen.done, errors.done]);
  assert.equal(status.code, 0, text + stderr);
  return text;
}

Deno.test({
  name: "magi run on a terminal: a progress line while a tool runs; NO_COLOR is plain",
  ignore: !hasScript,
  async fn() {
    const fancy = await onTerminal(false);
    assert.match(fancy, /running slow · \ds/);
    assert.ok(fancy.includes("\x1b[2m"), "dim text on a terminal");
    assert.match(fancy, /Finished\./);
    const plain = await onTerminal(true);
    assert.ok(!plain.includes("\x1b["), "no escape sequences with NO_COLOR");
    assert.doesNotMatch(plain, /running slow/);
    assert.match(plain, /→ slow/);
    assert.match(plain, /Finished\./);
  },
});
