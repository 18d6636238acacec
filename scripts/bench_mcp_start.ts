/**
 * Two MCP figures for `deno task bench`: a warm `magi tools` whose config names a server that
 * hangs (`sleep`, never answering `initialize`) and one that crashes, against the same
 * config without them (issue 17: at most 1.2×); and an MCP tool call through the pipeline
 * (the fixture server's `pid`) against the same call made by the SDK client directly.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "../lib/runtime/run_tool.ts";
import { closeMcpServers } from "../lib/sources/mcp/client.ts";
import { createRuntime } from "../lib/runtime/runtime.ts";
import { RUN_FLAGS } from "./permissions.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const FIXTURE = join(REPO, "tests", "testdata", "mcp", "fixture_server.ts");

/** The fixture server as a config entry. */
export const FIXTURE_SERVER = {
  command: Deno.execPath(),
  args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), FIXTURE],
};

/** How a figure is measured: `ratios(subject, floor, opts)` from bench.ts. */
type Ratios = (
  subject: () => Promise<unknown>,
  floor: () => Promise<unknown>,
  opts?: { reps?: number; runs?: number },
) => Promise<number[]>;

async function magiTools(config: string, env: Record<string, string>): Promise<void> {
  const out = await new Deno.Command("deno", {
    args: [
      "run",
      ...RUN_FLAGS,
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "main.ts"),
      "tools",
      "--config",
      config,
    ],
    env,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`magi tools failed: ${new TextDecoder().decode(out.stderr)}`);
}

/** Warm `magi tools` with a hung and a crashed server ÷ without them. */
export async function hungServerRatios(
  home: string,
  env: Record<string, string>,
  ratios: Ratios,
  runs: number,
): Promise<number[]> {
  const write = async (name: string, servers: Record<string, unknown>) => {
    const dir = join(home, name);
    await Deno.mkdir(dir, { recursive: true });
    const path = join(dir, "config.jsonc");
    await Deno.writeTextFile(path, JSON.stringify({ shipped_tools: false, mcp_servers: servers }));
    return path;
  };
  const plain = await write("mcp-plain", { fixture: FIXTURE_SERVER });
  const broken = await write("mcp-broken", {
    fixture: FIXTURE_SERVER,
    hang: { command: "sleep", args: ["600"], connect_timeout_seconds: 1 },
    crash: { command: "sh", args: ["-c", "exit 3"] },
  });
  // Cold runs fill the tool-list cache (the hung server is waited for once).
  await magiTools(plain, env);
  await magiTools(broken, env);
  // Five starts a sample: one start each way is mostly the machine's noise (0.67× to 1.49×
  // at load 15, for a difference under 1 %).
  return await ratios(() => magiTools(broken, env), () => magiTools(plain, env), {
    runs,
    reps: 5,
  });
}

/** An MCP tool call through the pipeline ÷ the same call by the SDK client directly. */
export async function mcpCallRatios(
  home: string,
  env: Record<string, string>,
  ratios: Ratios,
  reps: number,
): Promise<number[]> {
  const dir = join(home, "mcp-call");
  await Deno.mkdir(dir, { recursive: true });
  const config = join(dir, "config.jsonc");
  await Deno.writeTextFile(
    config,
    JSON.stringify({ shipped_tools: false, mcp_servers: { fixture: FIXTURE_SERVER } }),
  );
  const rt = await createRuntime({ cwd: home, env, configFlag: config, warn: () => {} });
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(
    new StdioClientTransport({ command: FIXTURE_SERVER.command, args: FIXTURE_SERVER.args }),
  );
  try {
    return await ratios(
      async () => {
        const r = await runTool(rt, { name: "fixture__pid", args: {}, caller: "person" });
        if (r.is_error) throw new Error(r.said);
      },
      () => direct.callTool({ name: "pid", arguments: {} }),
      { reps },
    );
  } finally {
    await direct.close();
    await closeMcpServers();
  }
}
