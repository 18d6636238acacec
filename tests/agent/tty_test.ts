import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, tempDir } from "../helpers.ts";
import { hasScript, onTerminal } from "../terminal/pty.ts";
import { reply, scriptedServer } from "./fake_provider.ts";
import { agentConfig, script } from "./setup.ts";

async function runSlow(noColor: boolean): Promise<string> {
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
  // The tool is shown running (a progress line on a terminal; its call line with NO_COLOR).
  return await onTerminal(["run", "go", "--config", config, "--tools-dir", tools], {
    cwd: dir.path,
    noColor,
    shown: noColor ? /→ slow/ : /running slow · \ds/,
    whenShown: () => Deno.writeTextFile(flag, ""),
  });
}

Deno.test({
  name: "magi run on a terminal: a progress line while a tool runs; NO_COLOR is plain",
  ignore: !hasScript,
  async fn() {
    const fancy = await runSlow(false);
    assert.match(fancy, /running slow · \ds/);
    assert.ok(fancy.includes("\x1b[2m"), "dim text on a terminal");
    assert.match(fancy, /Finished\./);
    const plain = await runSlow(true);
    assert.ok(!plain.includes("\x1b["), "no escape sequences with NO_COLOR");
    assert.doesNotMatch(plain, /running slow/);
    assert.match(plain, /→ slow/);
    assert.match(plain, /Finished\./);
  },
});
