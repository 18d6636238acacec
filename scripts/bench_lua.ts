/**
 * What Lua declarations cost at start-up: `magi tools --json` with no Lua files, with the
 * shipped declarations (read from the cache, or on a cold cache from the shipped manifest: no
 * engine either way), with a user's Lua file on a cold cache (a Lua Worker starts to read it);
 * then `magi call branch` warm (a Lua Worker starts at the call, and its `magi.exec` is
 * judged by the policy); then what a Lua Worker alone costs, in a fresh process (start,
 * wasmoon, load a file, run a body). Each figure is the median of several runs, in
 * milliseconds, with the ratio to the first.
 *
 * Run: `deno run -A scripts/bench_lua.ts [--runs N]`.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const at = Deno.args.indexOf("--runs");
const RUNS = at >= 0 ? Number(Deno.args[at + 1]) : 7;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function magi(args: string[], cwd: string, home: string): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command("deno", {
    args: [
      "run",
      "-A",
      "--unstable-worker-options",
      "--quiet",
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "main.ts"),
      ...args,
    ],
    cwd,
    env: {
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return ms;
}

/**
 * Milliseconds a Lua Worker takes in a fresh process from its start to a body's answer
 * (what the first Lua call adds): the Worker, wasmoon, the engine, one file, one run.
 */
async function workerAlone(): Promise<number> {
  const code = `const { LuaWorkerHost } = await import(${
    JSON.stringify(join(REPO, "lib/exec/lua/worker_host.ts"))
  });
const t = performance.now();
const host = new LuaWorkerHost({
  memoryBytes: 64 << 20,
  confine: { programs: () => [], judge: () => Promise.resolve({ refused: "none" }) },
  print: () => {},
  onEnd: () => {},
});
const file = 'magi.tool("x", { description = "x", run = function() return "x" end })';
const loaded = await host.loadFile("/x.lua", file, 5000);
const call = { cwd: "/", env: {}, timeoutMs: 5000, signal: new AbortController().signal };
await host.run(loaded.decls[0].id, {}, call);
console.log(performance.now() - t);
host.end();`;
  const out = await new Deno.Command("deno", {
    args: ["eval", "--unstable-worker-options", "--config", join(REPO, "deno.json"), code],
    cwd: REPO,
    stderr: "inherit",
  }).output();
  return Number(new TextDecoder().decode(out.stdout));
}

const work = await Deno.makeTempDir({ prefix: "magi-bench-lua-" });
try {
  await new Deno.Command("git", { args: ["init", "-q", "-b", "main"], cwd: work }).output();
  const noLua = join(work, "no-lua.jsonc");
  await Deno.writeTextFile(noLua, JSON.stringify({ shipped_tools: false }));
  const userDir = join(work, "lua");
  await Deno.mkdir(userDir);
  await Deno.copyFile(join(REPO, "tools", "todo.lua"), join(userDir, "my_todo.lua"));
  const userLua = join(work, "user-lua.jsonc");
  await Deno.writeTextFile(userLua, JSON.stringify({ shipped_tools: false, lua_dirs: [userDir] }));
  const warm = join(work, "warm");
  const warmNoLua = join(work, "warm-no-lua");
  await magi(["tools", "--json"], work, warm);
  await magi(["tools", "--json", "--config", noLua], work, warmNoLua);
  const rows: [string, number[]][] = [
    ["tools --json, no Lua files, warm cache", []],
    ["tools --json, shipped Lua, warm cache (no engine)", []],
    ["tools --json, no Lua files, cold cache", []],
    ["tools --json, shipped Lua, cold cache (manifest, no engine)", []],
    ["tools --json, one user Lua file, cold cache (a Lua Worker starts)", []],
    ["call branch, warm cache (a Lua Worker starts at the call)", []],
    ["Lua Worker alone: start, wasmoon, engine, load a file, run a body", []],
  ];
  for (let i = 0; i < RUNS; i++) {
    rows[0][1].push(await magi(["tools", "--json", "--config", noLua], work, warmNoLua));
    rows[1][1].push(await magi(["tools", "--json"], work, warm));
    rows[2][1].push(await magi(["tools", "--json", "--config", noLua], work, join(work, `n${i}`)));
    rows[3][1].push(await magi(["tools", "--json"], work, join(work, `c${i}`)));
    rows[4][1].push(
      await magi(["tools", "--json", "--config", userLua], work, join(work, `u${i}`)),
    );
    rows[5][1].push(await magi(["call", "branch"], work, warm));
    rows[6][1].push(await workerAlone());
  }
  const base = median(rows[0][1]);
  console.log("| start-up | median ms | min–max ms | ratio |");
  console.log("|---|---:|---:|---:|");
  for (const [what, values] of rows) {
    const m = median(values);
    console.log(
      `| ${what} | ${m.toFixed(0)} | ${Math.min(...values).toFixed(0)}–${
        Math.max(...values).toFixed(0)
      } | ${(m / base).toFixed(2)} |`,
    );
  }
} finally {
  await Deno.remove(work, { recursive: true });
}
