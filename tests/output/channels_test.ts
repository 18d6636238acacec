/**
 * Every channel by which bytes leave magi, in one table, each provoked to carry a secret —
 * a credential variable (`MAGI_TEST_TOKEN`) and the provider's API key (its variable's name
 * has no credential word: it is masked because the provider config names it). None may hold
 * either value, raw or encoded. A new channel joins {@link CHANNELS}.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { magi, makeTool, REPO, type TempDir, tempDir, TESTDATA, writeConfig } from "../helpers.ts";
import { reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig, makeTools, onlySession, script } from "../agent/setup.ts";

const TOKEN = `tok-${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
const KEY = `pk-${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
const KEY_ENV = "LLM_ACCESS";
const MCP_FIXTURE = join(TESTDATA, "mcp", "fixture_server.ts");
const ENV = { MAGI_TEST_TOKEN: TOKEN, [KEY_ENV]: KEY };

/** The forms of a value whose presence is a leak. */
function leakForms(value: string): string[] {
  const b = Buffer.from(value);
  return [value, b.toString("base64"), b.toString("base64url"), b.toString("hex")];
}

/** Everything captured from one scenario's commands, by name. */
type Captured = Record<string, string>;

/** All files under `dir`, concatenated (what magi wrote there); `only` picks by name. */
function filesUnder(dir: string, only: (name: string) => boolean = () => true): string {
  let all = "";
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory) walk(path);
      else if (e.isFile && only(e.name)) all += `\n== ${path}\n` + Deno.readTextFileSync(path);
    }
  };
  walk(dir);
  return all;
}

/** Tools that put the secret into each channel. */
async function leakyTools(dir: string): Promise<{ tools: string; lua: string }> {
  const tools = await makeTools(dir);
  await makeTool(
    tools,
    "leak-many",
    script(
      "leak-many — print the token many times",
      "leak-many",
      [
        `i=0; while [ $i -lt 3000 ]; do echo "line $i token=${TOKEN}"; i=$((i+1)); done`,
      ].join("\n"),
    ),
  );
  await makeTool(
    tools,
    "leak-one",
    script("leak-one — print the token", "leak-one", `echo "token=${TOKEN}"`),
  );
  await Deno.writeTextFile(
    join(tools, "leak-one", "selftest.sh"),
    `#!/bin/sh\necho "selftest saw ${TOKEN}"\nexit 1\n`,
    { mode: 0o755 },
  );
  await makeTool(
    tools,
    "help-leak",
    `#!/bin/sh
if [ "$1" = "--help" ]; then printf 'help-leak — its help says %s\\nhelp-leak\\n' "${TOKEN}"; exit 0; fi
echo ok
`,
  );
  const lua = join(dir, "lua");
  await Deno.mkdir(lua, { recursive: true });
  await Deno.writeTextFile(
    join(lua, "leak.lua"),
    `magi.tool("lua_leak", {
  description = "Print the token from Lua",
  run = function()
    print("lua says ${TOKEN}")
    return "printed"
  end,
})
`,
  );
  return { tools, lua };
}

/** The script of the agent runs: the model says the secrets and passes them to tools. */
function agentScript() {
  return [
    reply("openai", `Reading ${TOKEN} with ${KEY}, also ${btoa(TOKEN)}.`, [
      { id: "c1", name: "leak-one", args: {} },
      { id: "c2", name: "say", args: { args: [TOKEN, KEY] } },
      { id: "c3", name: "confirm", args: { target: TOKEN } },
      { id: "c4", name: "leak-many", args: {} },
      { id: "c5", name: `nosuch-${TOKEN}`, args: {} },
    ]),
    reply("openai", `Done; the key was ${KEY}.`),
  ];
}

/** Runs every scenario once, in one home, and captures what left magi. */
async function capture(dir: TempDir): Promise<Captured> {
  const home = join(dir.path, "home");
  const { tools, lua } = await leakyTools(dir.path);
  const out: Captured = {};
  const run = async (name: string, args: string[], stdin?: string) => {
    const r = await magi(args, { cwd: dir.path, env: ENV, home, stdin });
    out[`${name}.stdout`] = r.stdout;
    out[`${name}.stderr`] = r.stderr;
    return r;
  };
  const withConfig = async (url: string, extra: Record<string, unknown> = {}) =>
    await agentConfig(dir.path, "openai", url, {
      lua_dirs: [lua],
      limits: { said_bytes: 2048, shown_bytes: 4096 },
      ...extra,
    }, KEY_ENV);

  /** `magi run go FLAGS…` through the agent script, the tool's question answered. */
  const runGo = async (name: string, flags: string[]) => {
    await using server = scriptedServer("openai", agentScript());
    const config = await withConfig(server.url);
    const args = ["--config", config, "--tools-dir", tools, "--answer", `yes ${TOKEN}`];
    const r = await run(name, ["run", "go", ...flags, ...args]);
    assert.equal(r.code, 0, r.stderr);
  };
  {
    await runGo("run", []);
    const session = onlySession(dir.path);
    out["session.transcript"] = Deno.readTextFileSync(join(session, "transcript.jsonl"));
    out["session.context"] = Deno.readTextFileSync(join(session, "context.md"));
    out["spill"] = filesUnder(join(session, "spill"));
    assert.ok(out["spill"].includes("token="), "the run spilled");
    await Deno.remove(join(dir.path, "sessions"), { recursive: true });
  }
  await runGo("json", ["--json"]);
  {
    await using server = scriptedServer("openai", [
      reply("openai", "", [{
        id: "w",
        name: "write",
        args: { path: `${TOKEN}.txt`, content: KEY },
      }]),
      reply("openai", "Refused."),
    ]);
    const config = await withConfig(server.url);
    await run("chat", ["chat", "--config", config, "--tools-dir", tools], "write it\nn\n/exit\n");
  }
  {
    await using server = scriptedServer("openai", [
      { status: 401, json: { error: { message: `bad key ${KEY} for ${TOKEN}` } } },
    ]);
    const config = await withConfig(server.url, {
      providers: {
        fake: {
          kind: "openai",
          base_url: server.url,
          model: "m",
          api_key_env: KEY_ENV,
          max_retries: 0,
        },
      },
    });
    await run("provider_error", ["run", "go", "--config", config]);
    await run("provider_error_json", ["run", "go", "--json", "--config", config]);
  }
  const config = await withConfig("http://127.0.0.1:9/v1");
  await run("resume_error", ["run", "--resume", TOKEN, "more", "--config", config]);
  const callArgs = ["--config", config, "--tools-dir", tools];
  await run("call", ["call", "leak-one", "{}", ...callArgs]);
  await run("call_json", ["call", "say", JSON.stringify({ args: [KEY] }), "--json", ...callArgs]);
  await run("call_unknown", ["call", `nosuch-${TOKEN}`, "{}", ...callArgs]);
  await run("lua_print", ["call", "lua_leak", "{}", ...callArgs]);
  await Deno.mkdir(join(dir.path, "mcp"));
  const mcpConfig = await writeConfig(join(dir.path, "mcp"), {
    shipped_tools: false,
    mcp_servers: {
      fixture: {
        command: Deno.execPath(),
        args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), MCP_FIXTURE],
        env: { FIXTURE_TOKEN: TOKEN },
      },
    },
  });
  const mcpArgs = ["--config", mcpConfig];
  await run("mcp_call", ["call", "fixture__env", '{"name":"FIXTURE_TOKEN"}', ...mcpArgs]);
  await run("mcp_call_json", [
    "call",
    "fixture__env",
    '{"name":"FIXTURE_TOKEN"}',
    "--json",
    ...mcpArgs,
  ]);
  await run("tools", ["tools", ...callArgs]);
  await run("check", ["check", ...callArgs]);
  await run("tools_json", ["tools", "--json", ...callArgs]);
  const mcpCache = (name: string) => name === "mcp-tools.json";
  out["files"] = filesUnder(home, (n) => !mcpCache(n)) + filesUnder(join(dir.path, "sessions"));
  out["mcp_cache"] = filesUnder(home, mcpCache);
  return out;
}

/** One way bytes leave magi: where they go, how the test provokes it, what it captured. */
interface Channel {
  channel: string;
  provoked: string;
  bytes: (c: Captured) => string;
  /** What proves the channel carried the secret (masked): default `$MAGI_TEST_TOKEN`. */
  shows?: RegExp;
}

/** Every channel. A new one joins this table. */
export const CHANNELS: Channel[] = [
  {
    channel: "magi run stdout: the model's text",
    provoked: "the model says both values (split across token deltas) and one in base64",
    bytes: (c) => c["run.stdout"],
    shows: /\$LLM_ACCESS[\s\S]*\$LLM_ACCESS/,
  },
  {
    channel: "magi run stderr: tool-call lines with their arguments",
    provoked: "the model passes both values as a tool's arguments and names a tool with one",
    bytes: (c) => c["run.stderr"],
    shows: /→ say .*\$MAGI_TEST_TOKEN.*\$LLM_ACCESS/,
  },
  {
    channel: "magi run stderr: shown and the question with its --answer",
    provoked: "leak-one prints the token; confirm asks about it; --answer repeats it",
    bytes: (c) => c["run.stderr"],
    shows: /\? Delete \$MAGI_TEST_TOKEN\?.*→ yes \$MAGI_TEST_TOKEN/,
  },
  {
    channel: "magi run --json events (text, tool_call, tool_result, question)",
    provoked: "the same run with --json",
    bytes: (c) => c["json.stdout"] + c["json.stderr"],
    shows: /"type":"tool_call"[^\n]*\$MAGI_TEST_TOKEN/,
  },
  {
    channel: "session transcript.jsonl",
    provoked: "the run's events: the model's text, tool-call arguments, results, answers",
    bytes: (c) => c["session.transcript"],
  },
  {
    channel: "session context.md (given to tools)",
    provoked: "the run's conversation mirror",
    bytes: (c) => c["session.context"],
  },
  {
    channel: "spill file",
    provoked: "leak-many prints the token 3000 times, past the said limit",
    bytes: (c) => c["spill"],
  },
  {
    channel: "magi chat stdout: the approval prompt",
    provoked: "the model asks to write a file named with the token; the policy asks",
    bytes: (c) => c["chat.stdout"] + c["chat.stderr"],
    shows: /→ write [^\n]*\$MAGI_TEST_TOKEN[^\n]*\n\? allow write: /,
  },
  {
    channel: "error text: a provider failure (plain and --json)",
    provoked: "the provider answers 401 with both values in its message",
    bytes: (c) =>
      c["provider_error.stderr"] + c["provider_error_json.stdout"] +
      c["provider_error_json.stderr"],
    shows: /\$LLM_ACCESS/,
  },
  {
    channel: "error text: magi's own error line",
    provoked: "--resume names a session by the token",
    bytes: (c) => c["resume_error.stderr"],
  },
  {
    channel: "magi call: said and shown on stdout",
    provoked: "leak-one prints the token (tools never see credential variables)",
    bytes: (c) => c["call.stdout"] + c["call.stderr"],
  },
  {
    channel: "magi call --json",
    provoked: "say prints the provider key",
    bytes: (c) => c["call_json.stdout"] + c["call_json.stderr"],
    shows: /\$LLM_ACCESS/,
  },
  {
    channel: "magi call: an unknown tool's error result",
    provoked: "the tool's name holds the token",
    bytes: (c) => c["call_unknown.stdout"] + c["call_unknown.stderr"],
  },
  {
    channel: "MCP result (magi call, plain and --json)",
    provoked: "an MCP server returns the token (its config gives it the value)",
    bytes: (c) =>
      c["mcp_call.stdout"] + c["mcp_call.stderr"] + c["mcp_call_json.stdout"] +
      c["mcp_call_json.stderr"],
    shows: /value: \$MAGI_TEST_TOKEN/,
  },
  {
    channel: "Lua print (stderr)",
    provoked: "a Lua body prints the token",
    bytes: (c) => c["lua_print.stderr"] + c["lua_print.stdout"],
    shows: /lua: lua says \$MAGI_TEST_TOKEN/,
  },
  {
    channel: "magi tools (plain and --json): descriptions",
    provoked: "a tool's --help prints the token",
    bytes: (c) => c["tools.stdout"] + c["tools_json.stdout"] + c["tools.stderr"],
  },
  {
    channel: "magi check: a failing selftest's output",
    provoked: "leak-one's selftest prints the token and fails",
    bytes: (c) => c["check.stdout"] + c["check.stderr"],
    shows: /selftest saw \$MAGI_TEST_TOKEN/,
  },
  {
    channel: "files magi wrote: state, cache, sessions, spill",
    provoked: "every file under the XDG folders and the sessions dir after all of the above",
    bytes: (c) => c["files"],
  },
  {
    channel: "MCP tools cache (mcp-tools.json)",
    provoked: "the MCP server above was started with the token in its config env",
    bytes: (c) => c["mcp_cache"],
    shows: /fixture__env|"env"/,
  },
];

/**
 * Channels whose fix is on another engineer's branch (the MCP cache: keys hold the server's
 * config env raw). Empty this once that branch is merged.
 */
Deno.test("no channel out of magi carries a secret: the table of channels", async () => {
  await using dir = await tempDir();
  const captured = await capture(dir);
  const problems: string[] = [];
  for (const { channel, provoked, bytes, shows } of CHANNELS) {
    const text = bytes(captured) ?? "";
    for (const [name, value] of [["MAGI_TEST_TOKEN", TOKEN], [KEY_ENV, KEY]]) {
      for (const form of leakForms(value)) {
        if (text.includes(form)) problems.push(`${channel}: holds ${name} (${provoked})`);
      }
    }
    const proof = shows ?? /\$MAGI_TEST_TOKEN/;
    if (!proof.test(text)) {
      problems.push(
        `${channel}: not provoked (${provoked}); expected ${proof}:\n${text.slice(0, 1500)}`,
      );
    }
  }
  assert.deepEqual(problems, []);
});
