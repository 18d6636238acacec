/**
 * Benchmarks the `grep` builtin against GNU `grep -rn` on a large tree (default: this
 * repository's `node_modules`) and prints the ratio. Both run warm (the tree in the page
 * cache); each is timed several times and the median kept. The builtin is timed in-process
 * (no Deno start-up), the way a session calls it.
 *
 * Usage: deno run -A scripts/bench_grep.ts [TREE] [PATTERN…]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { grep } from "../builtins/grep.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const [tree = `${REPO}node_modules`, ...given] = Deno.args;
const patterns = given.length > 0 ? given : ["createTwoFilesPatch", "function", "TODO|FIXME"];
const RUNS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timeGnu(pattern: string): Promise<number> {
  const t0 = performance.now();
  await new Deno.Command("grep", { args: ["-rnE", pattern, tree], stdout: "null", stderr: "null" })
    .output();
  return performance.now() - t0;
}

async function timeBuiltin(pattern: string): Promise<number> {
  const t0 = performance.now();
  const result = await grep.run({ pattern, paths: [tree] }, {
    cwd: REPO,
    env: {},
    timeoutMs: 600_000,
    signal: new AbortController().signal,
    roots: ["/"],
    said: () => Promise.resolve(),
  });
  if (result.isError) throw new Error(String(result.said).slice(0, 500));
  return performance.now() - t0;
}

console.log(`tree: ${tree}`);
await timeGnu(patterns[0]); // warm the page cache
for (const pattern of patterns) {
  const gnu: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    gnu.push(await timeGnu(pattern));
    ours.push(await timeBuiltin(pattern));
  }
  const g = median(gnu);
  const o = median(ours);
  console.log(
    `${JSON.stringify(pattern).padEnd(24)} grep -rn ${g.toFixed(0).padStart(5)} ms   ` +
      `builtin ${o.toFixed(0).padStart(5)} ms   ratio ${(o / g).toFixed(2)}×`,
  );
}
