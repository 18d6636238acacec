/**
 * `deno task bench:memory`: magi's memory budgets, measured on whole `magi call` processes
 * (peak resident memory, `VmHWM` in /proc/PID/status, Linux). They were test assertions; a
 * busy machine made them slow and flaky there, so they are figures here, each against its
 * budget:
 *
 * - 1 GiB of a tool's output grows magi's peak memory by less than 64 MiB over 1 MiB of it
 *   (the output streams to the spill file, which stops at `limits.spill_bytes`);
 * - `read` of lines after a 2 GB hole of a sparse file peaks below 400 MiB.
 *
 * Prints one line a figure (`ok` or `OVER`) and exits 1 when any is over its budget.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchEnv } from "./bench_env.ts";
import { RUN_FLAGS } from "./permissions.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const MIB = 1048576;

/** Runs `magi ARGS…` in `cwd`; returns its peak resident memory in bytes and its stdout. */
async function peakOf(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ peak: number; stdout: string }> {
  const child = new Deno.Command("deno", {
    args: ["run", ...RUN_FLAGS, "--quiet", "--config", join(REPO, "deno.json")]
      .concat([join(REPO, "main.ts"), ...args]),
    cwd,
    env,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let peak = 0;
  const poll = setInterval(() => {
    try {
      const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      peak = Math.max(peak, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024);
    } catch {
      // The process has ended.
    }
  }, 10);
  const out = await child.output();
  clearInterval(poll);
  return { peak, stdout: new TextDecoder().decode(out.stdout) };
}

/** Peak growth of `magi call gib` for 1 GiB of output over 1 MiB of it. */
async function outputGrowth(home: string, env: Record<string, string>): Promise<number> {
  const gib = (mib: number) =>
    peakOf(
      [
        "call",
        "gib",
        JSON.stringify({ args: [String(mib)] }),
        "--json",
        "--tools-dir",
        join(REPO, "tests", "testdata", "big-tools"),
      ],
      home,
      env,
    );
  const small = await gib(1);
  const big = await gib(1024);
  const spill = JSON.parse(big.stdout).spill;
  if (spill) await Deno.remove(spill);
  return big.peak - small.peak;
}

/**
 * Writes a sparse log: 10,000 lines `head N` (so it starts as text: binary detection reads
 * 8 kB), a hole up to `size` bytes, then the lines `tail 1`, `tail 2`.
 */
export async function sparseLog(path: string, size: number): Promise<void> {
  using file = await Deno.open(path, { write: true, create: true });
  const head = Array.from({ length: 10_000 }, (_, i) => `head ${i + 1}\n`).join("");
  await file.write(new TextEncoder().encode(head));
  await file.truncate(size);
  await file.seek(size, Deno.SeekMode.Start);
  await file.write(new TextEncoder().encode("\ntail 1\ntail 2\n"));
}

/** Peak memory of `magi call read` after a 2 GB hole of a sparse file. */
async function sparseRead(home: string, env: Record<string, string>): Promise<number> {
  await sparseLog(join(home, "sparse.log"), 2 * 1024 ** 3);
  const args = ["call", "read", JSON.stringify({ path: "sparse.log", offset: 10_000, limit: 4 })];
  const { peak, stdout } = await peakOf(args.concat("--json"), home, env);
  if (!/tail 2/.test(JSON.parse(stdout).said)) throw new Error(`read gave: ${stdout}`);
  return peak;
}

if (import.meta.main) {
  const { home, env } = await benchEnv("magi-bench-memory-");
  const figures: [string, number, number][] = [
    ["1 GiB of output: peak growth over 1 MiB", await outputGrowth(home, env), 64 * MIB],
    ["read after a 2 GB sparse hole: peak", await sparseRead(home, env), 400 * MIB],
  ];
  await Deno.remove(home, { recursive: true });
  let over = false;
  for (const [what, bytes, budget] of figures) {
    over ||= bytes >= budget;
    const verdict = bytes < budget ? "ok" : "OVER";
    console.log(`${what}: ${(bytes / MIB).toFixed(1)} MiB (budget ${budget / MIB} MiB) ${verdict}`);
  }
  Deno.exit(over ? 1 : 0);
}
