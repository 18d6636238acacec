/**
 * `magi mcp` speed over stdio: calls per second for `read` of a small file and for
 * `run 'echo hi'`, against a bare SDK server under Deno doing only the same work (the
 * floor, scripts/bench_mcp_floor.ts), measured in one run and printed as ratios. Claude
 * Code's own server (`claude mcp serve`, its `Read` and `Bash`; it runs offline) is measured
 * too when `MAGI_BENCH_CLAUDE` names its binary or `claude` is on PATH — e.g. after
 * `npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.332`,
 * `MAGI_BENCH_CLAUDE=/tmp/cc/node_modules/.bin/claude`.
 *
 * Run: `deno run -A scripts/bench_mcp.ts [--quick]`.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const quick = Deno.args.includes("--quick");
const RUNS = quick ? 3 : 5;
const CALLS = quick ? 100 : 300;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function connect(command: string, args: string[], env: Record<string, string>) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command, args, env: { ...Deno.env.toObject(), ...env } }),
  );
  return client;
}

/** Milliseconds per call, over `CALLS` calls made one after another. */
async function perCall(client: Client, name: string, args: Record<string, unknown>) {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
  return (performance.now() - start) / CALLS;
}

const home = await Deno.makeTempDir({ prefix: "magi-bench-mcp-" });
const file = join(home, "small.txt");
await Deno.writeTextFile(file, "a small file\nwith three lines\nthe end\n");
const config = join(home, "config.jsonc");
await Deno.writeTextFile(config, JSON.stringify({ shipped_tools: false }));
const xdg = {
  XDG_CONFIG_HOME: join(home, "config"),
  XDG_CACHE_HOME: join(home, "cache"),
  XDG_STATE_HOME: join(home, "state"),
};
const deno = Deno.execPath();
const denoRun = ["run", "-A", "--quiet", "--config", join(REPO, "deno.json")];

const magi = await connect(
  deno,
  [...denoRun, join(REPO, "main.ts"), "mcp", "--config", config],
  xdg,
);
const floor = await connect(deno, [...denoRun, join(REPO, "scripts", "bench_mcp_floor.ts")], {});
let claude: Client | undefined;
try {
  const bin = Deno.env.get("MAGI_BENCH_CLAUDE") || "claude";
  claude = await connect(bin, ["mcp", "serve"], { HOME: join(home, "claude-home") });
} catch {
  claude = undefined;
}

const cases = [
  {
    what: "read (small file)",
    magi: ["read", { path: file }],
    claude: ["Read", { file_path: file }],
  },
  {
    what: "run 'echo hi'",
    magi: ["run", { command: "echo hi" }],
    claude: ["Bash", { command: "echo hi" }],
  },
] as const;

const rows: string[] = [];
try {
  for (const c of cases) {
    const [name, args] = c.magi;
    await perCall(magi, name, args);
    await perCall(floor, name, args);
    const m: number[] = [];
    const f: number[] = [];
    const cc: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      m.push(await perCall(magi, name, args));
      f.push(await perCall(floor, name, args));
      if (claude) cc.push(await perCall(claude, c.claude[0], c.claude[1]));
    }
    const ms = median(m);
    const floorMs = median(f);
    const ccText = claude
      ? `${median(cc).toFixed(2)} ms | ${(ms / median(cc)).toFixed(2)}×`
      : "not measured | –";
    rows.push(
      `| ${c.what} | ${ms.toFixed(2)} ms (${(1000 / ms).toFixed(0)}/s) | ${
        floorMs.toFixed(2)
      } ms | ${(ms / floorMs).toFixed(2)}× | ${ccText} |`,
    );
  }
} finally {
  await magi.close();
  await floor.close();
  await claude?.close();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}

console.log(`magi mcp over stdio, ${CALLS} calls × ${RUNS} runs, medians\n`);
console.log("| call | magi | bare SDK floor | magi ÷ floor | Claude Code | magi ÷ Claude Code |");
console.log("|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
