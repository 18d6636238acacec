/**
 * The sandbox's per-call cost for `deno task bench`: `run 'true'` through the pipeline with the
 * workspace-write sandbox on, against the same call with it off, in milliseconds added per
 * call. Target: at most 15 ms.
 *
 * Alone: `deno run -A scripts/bench_sandbox.ts [--quick]`.
 *
 * @module
 */
import { join } from "node:path";
import { benchEnv } from "./bench_env.ts";
import { runTool } from "../lib/runtime/run_tool.ts";
import { createRuntime } from "../lib/runtime/runtime.ts";

/**
 * Milliseconds the sandbox adds to one `run 'true'`, one value per sample (each the mean over
 * `reps` calls, sandboxed and plain back to back).
 *
 * @param env magi's environment (XDG folders already private)
 */
export async function sandboxAddedMs(
  home: string,
  env: Record<string, string>,
  opts: { runs: number; reps: number },
): Promise<number[]> {
  const make = async (sandbox: boolean) => {
    const config = join(home, `sandbox-${sandbox}.jsonc`);
    await Deno.writeTextFile(config, JSON.stringify({ policy: { sandbox } }));
    return await createRuntime({ cwd: home, env, configFlag: config, warn: () => {} });
  };
  const on = await make(true);
  const off = await make(false);
  const call = async (rt: typeof on) => {
    const r = await runTool(rt, { name: "run", args: { command: "true" }, caller: "person" });
    if (r.is_error) throw new Error(`run 'true' failed: ${r.said.slice(0, 300)}`);
  };
  const timed = async (rt: typeof on) => {
    const start = performance.now();
    for (let i = 0; i < opts.reps; i++) await call(rt);
    return (performance.now() - start) / opts.reps;
  };
  await call(on);
  await call(off);
  const out: number[] = [];
  for (let i = 0; i < opts.runs; i++) out.push((await timed(on)) - (await timed(off)));
  return out;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const { home, env } = await benchEnv("magi-bench-sandbox-");
  try {
    const added = await sandboxAddedMs(home, env, { runs: quick ? 3 : 5, reps: quick ? 10 : 30 });
    const sorted = [...added].sort((a, b) => a - b);
    const f = (n: number) => `${n.toFixed(1)} ms`;
    console.log(
      `sandbox adds to run 'true': median ${f(sorted[Math.floor(sorted.length / 2)])}, ` +
        `min ${f(sorted[0])}, max ${f(sorted.at(-1)!)} (target ≤ 15 ms)`,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}
