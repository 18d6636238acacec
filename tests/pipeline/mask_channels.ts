/**
 * Masking through the real pipeline, in every channel a tool's output reaches: a tools_dir
 * tool runs a shell body; `magi call` prints what the person is shown, `magi run --json`
 * (against a scripted provider) gives the `--json` events, the tool result the model is sent
 * (said) and the session's transcript.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, makeTool, tempDir } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig, onlySession, script } from "../agent/setup.ts";

/** What left magi, by channel. */
export interface Channels {
  /** The tool result the provider received. */
  said: string;
  /** `magi call` standard output. */
  shown: string;
  /** `magi run --json` standard output. */
  json: string;
  /** The session's transcript.jsonl. */
  transcript: string;
}

/**
 * Runs a tool whose body is `body` (a shell script; `$DATA` is a folder holding `files`)
 * once with `magi call` and once in `magi run --json`.
 *
 * @param opts.env variables added to magi's environment
 * @param opts.config keys added to the config (`secrets`, …)
 */
export async function throughChannels(
  body: string,
  opts: {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
    files?: Record<string, string | Uint8Array>;
  } = {},
): Promise<Channels> {
  await using dir = await tempDir();
  const data = join(dir.path, "data");
  await Deno.mkdir(data);
  for (const [name, content] of Object.entries(opts.files ?? {})) {
    if (typeof content === "string") await Deno.writeTextFile(join(data, name), content);
    else await Deno.writeFile(join(data, name), content);
  }
  const tools = join(dir.path, "tools");
  await makeTool(tools, "leak", script("leak — print things", "leak", `DATA='${data}'\n${body}`));
  const env = { FAKE_PROVIDER_KEY: "fake-provider-key-0001", ...opts.env };
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "c1", name: "leak", args: {} }]),
    reply("openai", "done"),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url, opts.config);
  const args = ["--config", config, "--tools-dir", tools];
  const call = await magi(["call", "leak", "{}", ...args], { cwd: dir.path, env });
  assert.equal(call.code, 0, call.stderr);
  const run = await magi(["run", "go", "--json", ...args], { cwd: dir.path, env });
  assert.equal(run.code, 0, run.stderr);
  const said = toolResultsIn("openai", server.requests[1]).map((r) => r.content).join("\n");
  const transcript = Deno.readTextFileSync(join(onlySession(dir.path), "transcript.jsonl"));
  return { said, shown: call.stdout, json: run.stdout, transcript };
}

/** Asserts that no channel holds any of `leaks` and that each holds `mark`. */
export function assertMasked(channels: Channels, leaks: readonly string[], mark: string): void {
  for (const [channel, text] of Object.entries(channels)) {
    for (const leak of leaks) {
      assert.ok(!text.includes(leak), `${channel} holds ${JSON.stringify(leak)}:\n${text}`);
    }
    assert.ok(text.includes(mark), `${channel} lacks ${mark}:\n${text}`);
  }
}
