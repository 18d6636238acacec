/**
 * A project folder for agent tests: fixture tools in a tools folder, a config pointing the
 * provider at a scripted server, and a sessions dir inside the folder.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, REPO, writeConfig } from "../helpers.ts";

/** A generic tools_dir tool: a shell script with a `--help` header. */
export function script(summary: string, usage: string, body: string): string {
  return `#!/bin/sh
if [ "$1" = "--help" ]; then printf '%s\\n%s\\n' "${summary}" "${usage}"; exit 0; fi
${body}
`;
}

/** The fixture tools every agent test gets. */
export async function makeTools(dir: string): Promise<string> {
  const tools = join(dir, "tools");
  await makeTool(
    tools,
    "wait-for",
    script(
      "wait-for — wait until a file exists",
      "wait-for <path>",
      `i=0
while [ ! -e "$1" ]; do
  i=$((i+1)); if [ $i -gt 200 ]; then echo "gave up waiting for $1" >&2; exit 1; fi
  sleep 0.05
done
# touch-file may still be exiting: finish clearly after it, so the order results are
# recorded in (as they finish) is the same on every run.
sleep 0.3
echo "saw $1"`,
    ),
  );
  await makeTool(
    tools,
    "touch-file",
    script(
      "touch-file — create an empty file",
      "touch-file <path>",
      'touch "$1" && echo "touched $1"',
    ),
  );
  await makeTool(
    tools,
    "say",
    script("say — print its arguments", "say <words>...", 'echo "$@"'),
  );
  await makeTool(
    tools,
    "fail",
    script("fail — always fails", "fail", 'echo "disk on fire" >&2; exit 3'),
  );
  await makeTool(
    tools,
    "print-env",
    script("print-env — print an environment variable", "print-env <name>", 'printenv "$1"'),
  );
  await makeTool(
    tools,
    "flood",
    script("flood — print many lines", "flood <count>", 'seq 1 "$1" | sed "s/^/line /"'),
  );
  await makeTool(
    tools,
    "nap",
    script(
      "nap — write a marker, then sleep",
      "nap <marker>",
      'echo $$ > "$1"; sleep 30; echo "woke"',
    ),
  );
  await makeTool(
    tools,
    "session-info",
    script(
      "session-info — print the session context",
      "session-info",
      'echo "$MAGI_SESSION|$MAGI_SESSIONS_DIR|$MAGI_CONTEXT_PATH|$MAGI_ATTACH_DIR"; cat "$MAGI_CONTEXT_PATH"',
    ),
  );
  await makeTool(
    tools,
    "confirm",
    script(
      "confirm — ask before acting on a target",
      "confirm <target> [--answer TEXT]",
      `if [ "$2" != "--answer" ]; then
  printf '{"ask":"Delete %s?","choices":["yes","no"]}' "$1" > "$MAGI_ASK"; exit 0
fi
echo "answer for $1: $3"`,
    ),
    {
      type: "object",
      properties: { target: { type: "string" }, answered: { type: "string" } },
      required: ["target"],
      "x-magi": { argv: [{ field: "target" }, { flag: "--answer", field: "answered" }] },
    },
  );
  return tools;
}

/** Writes the config for a scripted provider and returns its path. */
export function agentConfig(
  dir: string,
  kind: "openai" | "anthropic",
  url: string,
  extra: Record<string, unknown> = {},
  keyEnv = "FAKE_PROVIDER_KEY",
): Promise<string> {
  return writeConfig(dir, {
    providers: {
      fake: { kind, base_url: url, model: "test-model", api_key_env: keyEnv, max_retries: 2 },
    },
    provider: "fake",
    sessions_dir: join(dir, "sessions"),
    shipped_tools: false,
    ...extra,
    // The fixture tools write files: the person's own rule runs a model's calls of them in
    // the workspace-write sandbox (a default rule's allow runs read-only).
    policy: {
      ...(extra.policy as Record<string, unknown> ?? {}),
      rules: [
        { id: "fixture-tools", tool: "*", source: "tools_dir", decision: "allow" },
        ...((extra.policy as { rules?: unknown[] })?.rules ?? []),
      ],
    },
  });
}

/** The only session folder under `dir/sessions`. */
export function onlySession(dir: string): string {
  const entries = [...Deno.readDirSync(join(dir, "sessions"))].filter((e) => e.isDirectory);
  if (entries.length !== 1) throw new Error(`expected one session, found ${entries.length}`);
  return join(dir, "sessions", entries[0].name);
}

/** The scripted providers' key, as the agent tests' configs name it (`FAKE_PROVIDER_KEY`). */
export const PROVIDER_ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

/**
 * `magi chat ARGS` started from `dir` as a child the test types into and signals (Ctrl-C is
 * `child.kill("SIGINT")`): stdin, stdout and stderr piped, no colour, the provider's key set,
 * config, cache and state in `dir/home`.
 */
export function spawnChat(dir: string, args: string[]): Deno.ChildProcess {
  const home = join(dir, "home");
  return new Deno.Command("deno", {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), join(REPO, "main.ts")]
      .concat(["chat", ...args]),
    cwd: dir,
    env: {
      ...PROVIDER_ENV,
      NO_COLOR: "1",
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Presses Ctrl-C in a {@link spawnChat} child (SIGINT), types one more request ("wake up")
 * and `/exit`, and waits for the chat to end; asserts that it exited 0 and marked the turn
 * `(interrupted)`.
 *
 * @returns what the chat wrote on stdout
 */
export async function interruptThenGoOn(
  child: Deno.ChildProcess,
  stdin: WritableStreamDefaultWriter<Uint8Array>,
): Promise<string> {
  child.kill("SIGINT");
  await stdin.write(new TextEncoder().encode("wake up\n/exit\n"));
  await stdin.close();
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(stdout, /\(interrupted\)/);
  return stdout;
}
