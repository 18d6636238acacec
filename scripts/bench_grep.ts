/**
 * Benchmarks the `grep` builtin against GNU `grep -rnE` on a large tree (default: this
 * repository's `node_modules`) and prints the ratios. Both run warm (the tree in the page
 * cache); each is run several times and the median kept. The builtin runs in-process (no
 * Deno start-up), the way a session calls it. Wall time suffers from other load on a shared
 * machine, so CPU time (user + system: `process.cpuUsage()` for the builtin,
 * `/usr/bin/time` for grep) is printed too.
 *
 * Usage: deno run -A scripts/bench_grep.ts [TREE] [PATTERN…]
 *
 * With `--memory [MB]` it instead searches one file of MB megabytes (default 200) of text
 * lines whose one match is near the end, and prints the process's resident memory (RSS)
 * before and after, and its peak (`VmHWM` in /proc/self/status, Linux), in MiB.
 *
 * @module
 */
import process from "node:process";
import { fileURLToPath } from "node:url";
import { grep } from "../lib/sources/builtins/grep.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
if (Deno.args[0] === "--memory") {
  await memory(Number(Deno.args[1] ?? 200));
  Deno.exit(0);
}
const [tree = `${REPO}node_modules`, ...given] = Deno.args;
const patterns = given.length > 0 ? given : ["createTwoFilesPatch", "function", "TODO|FIXME"];
const RUNS = 5;

interface Sample {
  wall: number;
  cpu: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timeGnu(pattern: string): Promise<Sample> {
  const t0 = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "%U %S", "grep", "-rnE", pattern, tree],
    stdout: "null",
    stderr: "piped",
  }).output();
  const wall = performance.now() - t0;
  const last = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1) ?? "";
  const [user, sys] = last.split(" ").map(Number);
  return { wall, cpu: (user + sys) * 1000 };
}

async function timeBuiltin(pattern: string): Promise<Sample> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await grep.run({ pattern, paths: [tree] }, {
    cwd: REPO,
    env: {},
    timeoutMs: 600_000,
    signal: new AbortController().signal,
    roots: ["/"],
    said: () => Promise.resolve(),
  });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  if (result.isError) throw new Error(String(result.said).slice(0, 500));
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

const ms = (x: number) => `${x.toFixed(0).padStart(5)} ms`;
console.log(`tree: ${tree}; median of ${RUNS}; wall (CPU)`);
await timeGnu(patterns[0]); // warm the page cache
for (const pattern of patterns) {
  const gnu: Sample[] = [];
  const ours: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    gnu.push(await timeGnu(pattern));
    ours.push(await timeBuiltin(pattern));
  }
  const g = { wall: median(gnu.map((s) => s.wall)), cpu: median(gnu.map((s) => s.cpu)) };
  const o = { wall: median(ours.map((s) => s.wall)), cpu: median(ours.map((s) => s.cpu)) };
  console.log(
    `${JSON.stringify(pattern).padEnd(22)} grep -rn ${ms(g.wall)} (${ms(g.cpu)})   ` +
      `builtin ${ms(o.wall)} (${ms(o.cpu)})   ratio ${(o.wall / g.wall).toFixed(2)}× ` +
      `(CPU ${(o.cpu / g.cpu).toFixed(2)}×)`,
  );
}

/** Peak resident memory of this process in bytes (Linux), or NaN. */
function peakRss(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = status.match(/^VmHWM:\s+(\d+) kB/m)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

async function memory(megabytes: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "magi-bench-grep-" });
  try {
    const path = `${dir}/big.log`;
    const line = "a line of filler text in a large log file, 64 bytes with this..\n";
    const block = new TextEncoder().encode(line.repeat(16384)); // 1 MiB
    for (let i = 0; i < megabytes; i++) await Deno.writeFile(path, block, { append: true });
    await Deno.writeTextFile(path, "the needle is here\n", { append: true });
    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
    const before = Deno.memoryUsage().rss;
    const peakBefore = peakRss();
    const result = await grep.run({ pattern: "needle", paths: [path] }, {
      cwd: dir,
      env: {},
      timeoutMs: 600_000,
      signal: new AbortController().signal,
      roots: ["/"],
      said: () => Promise.resolve(),
    });
    const after = Deno.memoryUsage().rss;
    console.log(`file: ${megabytes} MiB; said: ${String(result.said).trim()}`);
    console.log(
      `RSS before ${mib(before)}, after ${mib(after)}; ` +
        `peak before ${mib(peakBefore)}, after ${mib(peakRss())}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
