/**
 * `magi mcp` speed over stdio: `read` of a small file and `run 'echo hi'`, each against a bare
 * SDK server under Deno doing only the same work (the floor, scripts/bench_mcp_floor.ts),
 * measured in one run as ratios. {@link mcpServeRatios} gives `deno task bench` its two rows.
 * Alone, this script also prints milliseconds per call and the CPU time per call of each
 * server's process tree (which load disturbs less than wall time), and measures Claude Code's own server
 * (`claude mcp serve`, its `Read` and `Bash`; it runs offline) when `MAGI_BENCH_CLAUDE` names
 * its binary or `claude` is on PATH — e.g. after
 * `npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.332`,
 * `MAGI_BENCH_CLAUDE=/tmp/cc/node_modules/.bin/claude`.
 *
 * Run: `deno run -A scripts/bench_mcp.ts [--quick] [--no-sandbox]`.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { RUN_FLAGS } from "./permissions.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Servers' process ids, for {@link treeCpuMs}. */
const pids = new WeakMap<Client, number>();

async function connect(command: string, args: string[], env: Record<string, string>) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...Deno.env.toObject(), ...env },
  });
  await client.connect(transport);
  if (transport.pid !== null) pids.set(client, transport.pid);
  return client;
}

/**
 * CPU time (user + system, ms) of a server's process and every process below it — the
 * children it waited for included (Linux `/proc`; 0 elsewhere). Load disturbs it less than
 * wall time: what the call costs, not how long it waited for a core.
 */
function treeCpuMs(client: Client): number {
  const root = pids.get(client);
  if (root === undefined || Deno.build.os !== "linux") return 0;
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const text = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
      // After the name: state ppid … utime(12) stime(13) cutime(14) cstime(15), from 0.
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      stats.set(Number(e.name), { ppid: Number(f[1]), ticks });
    } catch {
      // ended meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      if (p === root) return true;
      p = stats.get(p)?.ppid ?? 0;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, s] of stats) if (inTree(pid)) ticks += s.ticks;
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Milliseconds per call, over `calls` calls made one after another. */
async function perCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  calls: number,
): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
  return (performance.now() - start) / calls;
}

/** One case's milliseconds per call, one value per run, for magi, the floor and Claude Code. */
export interface McpCase {
  what: string;
  /** What the floor does. */
  against: string;
  magi: number[];
  floor: number[];
  claude: number[];
  /** CPU milliseconds per call of the server's process tree, per run (see {@link treeCpuMs}). */
  magiCpu: number[];
  floorCpu: number[];
}

/**
 * `read` of a small file and `run 'echo hi'` through `magi mcp` (the permission set of
 * `deno task magi`, the default policy; the sandbox on unless `sandbox` is false) and through
 * the bare SDK server, run after run back to back; each value is the mean of `calls` calls.
 *
 * @param home an empty folder for the file, config and XDG folders (left in place)
 * @param claudeBin Claude Code's binary, to measure it too (a start failure skips it)
 */
export async function mcpServeCases(
  home: string,
  opts: { runs: number; calls: number; claudeBin?: string; sandbox?: boolean },
): Promise<McpCase[]> {
  await Deno.mkdir(home, { recursive: true });
  const file = join(home, "small.txt");
  await Deno.writeTextFile(file, "a small file\nwith three lines\nthe end\n");
  const config = join(home, "mcp-serve.jsonc");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      shipped_tools: false,
      // The file's folder and the server's: the system temp folder is no default root.
      roots: [home, REPO],
      ...(opts.sandbox === false ? { sandbox: { mode: "off" } } : {}),
    }),
  );
  const xdg = {
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
  };
  const deno = Deno.execPath();
  const conf = ["--quiet", "--config", join(REPO, "deno.json")];
  const magi = await connect(
    deno,
    ["run", ...RUN_FLAGS, ...conf, join(REPO, "main.ts"), "mcp", "--config", config],
    xdg,
  );
  const floor = await connect(
    deno,
    ["run", "-A", ...conf, join(REPO, "scripts", "bench_mcp_floor.ts")],
    {},
  );
  let claude: Client | undefined;
  if (opts.claudeBin) {
    try {
      claude = await connect(opts.claudeBin, ["mcp", "serve"], {
        HOME: join(home, "claude-home"),
      });
    } catch {
      claude = undefined;
    }
  }
  // The floor's tool is magi's, but for `run` against `bash -c` (the program magi starts; the
  // `sh -c` floor starts a lighter shell).
  const cases = [
    {
      what: "read", // of a small file
      magi: ["read", { path: file }],
      floor: "read",
      against: "a bare MCP SDK server under Deno doing the same",
      claude: ["Read", { file_path: file }],
    },
    {
      what: "run 'echo hi'",
      magi: ["run", { command: "echo hi" }],
      floor: "run",
      against: "a bare MCP SDK server under Deno doing the same with `sh -c`",
      claude: ["Bash", { command: "echo hi" }],
    },
    {
      what: "run 'echo hi'",
      magi: ["run", { command: "echo hi" }],
      floor: "bash",
      against: "the same with `bash -c` (the program magi's `run` starts)",
      claude: ["Bash", { command: "echo hi" }],
    },
  ] as const;
  const out: McpCase[] = [];
  try {
    for (const c of cases) {
      const [name, args] = c.magi;
      await perCall(magi, name, args, opts.calls);
      await perCall(floor, c.floor, args, opts.calls);
      const row: McpCase = {
        what: c.what,
        against: c.against,
        magi: [],
        floor: [],
        claude: [],
        magiCpu: [],
        floorCpu: [],
      };
      const cpuPerCall = async (client: Client, f: () => Promise<number>, into: number[]) => {
        const before = treeCpuMs(client);
        const ms = await f();
        into.push((treeCpuMs(client) - before) / opts.calls);
        return ms;
      };
      for (let i = 0; i < opts.runs; i++) {
        row.magi.push(
          await cpuPerCall(magi, () => perCall(magi, name, args, opts.calls), row.magiCpu),
        );
        row.floor.push(
          await cpuPerCall(floor, () => perCall(floor, c.floor, args, opts.calls), row.floorCpu),
        );
        if (claude) row.claude.push(await perCall(claude, c.claude[0], c.claude[1], opts.calls));
      }
      out.push(row);
    }
  } finally {
    await magi.close();
    await floor.close();
    await claude?.close();
  }
  return out;
}

/** magi ÷ floor per run, for each case (bench.ts's rows). */
export async function mcpServeRatios(
  home: string,
  opts: { runs: number; calls: number; sandbox?: boolean },
): Promise<{ what: string; against: string; ratios: number[] }[]> {
  const cases = await mcpServeCases(home, opts);
  return cases.map((c) => ({
    what: c.what,
    against: c.against,
    ratios: c.magi.map((m, i) => m / c.floor[i]),
  }));
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const runs = quick ? 3 : 5;
  const calls = quick ? 100 : 300;
  const home = await Deno.makeTempDir({ prefix: "magi-bench-mcp-" });
  let cases: McpCase[];
  try {
    cases = await mcpServeCases(home, {
      runs,
      calls,
      claudeBin: Deno.env.get("MAGI_BENCH_CLAUDE") || "claude",
      sandbox: !Deno.args.includes("--no-sandbox"),
    });
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
  console.log(`magi mcp over stdio, ${calls} calls × ${runs} runs, medians\n`);
  console.log(
    "| call | magi | bare SDK floor | magi ÷ floor | CPU ms a call, magi / floor (÷) | " +
      "Claude Code | magi ÷ Claude Code |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const c of cases) {
    const ms = median(c.magi);
    const floorMs = median(c.floor);
    const cc = c.claude.length > 0
      ? `${median(c.claude).toFixed(2)} ms | ${(ms / median(c.claude)).toFixed(2)}×`
      : "not measured | –";
    console.log(
      `| ${c.what} (floor: ${c.against}) | ${ms.toFixed(2)} ms (${(1000 / ms).toFixed(0)}/s) | ${
        floorMs.toFixed(2)
      } ms | ${(ms / floorMs).toFixed(2)}× | ${median(c.magiCpu).toFixed(2)} / ${
        median(c.floorCpu).toFixed(2)
      } (${(median(c.magiCpu) / median(c.floorCpu)).toFixed(2)}×) | ${cc} |`,
    );
  }
}
