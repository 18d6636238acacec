/**
 * The sandbox's per-call cost for `deno task bench`: `run 'true'` through the pipeline with the
 * workspace-write sandbox on, against the same call with it off, in milliseconds added per
 * call. Target: at most 15 ms. Measured twice: with an empty temp folder of the bench's own,
 * and with a crowded one (see {@link crowd}: repositories, folders of old sockets, a tmux
 * server's folder, plain folders), TMPDIR pointing at each in turn.
 *
 * Alone: `deno run -A scripts/bench_sandbox.ts [--quick]` prints one row per temp folder
 * (median, min and max of the samples).
 *
 * @module
 */
import { join } from "node:path";
import { benchEnv } from "./bench_env.ts";
import { runTool } from "../lib/runtime/run_tool.ts";
import { createRuntime } from "../lib/runtime/runtime.ts";
import { probesSettled, SETTLED_S } from "../lib/confinement/sandbox_dead.ts";

/**
 * Milliseconds the sandbox adds to one `run 'true'`, one value per sample (each the mean over
 * `reps` pairs of calls, sandboxed then plain), in the temp folder magi sees now.
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
  // Sandboxed and plain calls interleaved, so both meet the same load.
  const sample = async () => {
    let added = 0;
    for (let i = 0; i < opts.reps; i++) {
      const start = performance.now();
      await call(on);
      const middle = performance.now();
      await call(off);
      added += (middle - start) - (performance.now() - middle);
    }
    return added / opts.reps;
  };
  await call(on);
  // The first call's background look at the temp folder's sockets (see sandbox_dead.ts).
  await probesSettled();
  await call(off);
  const out: number[] = [];
  for (let i = 0; i < opts.runs; i++) out.push(await sample());
  return out;
}

/**
 * Fills `dir` the way a long-used machine's temp folder looks: `repos` git repositories (each
 * with hooks the sandbox keeps read-only), `deadSockets` folders each holding the socket file of
 * a session that is gone, `liveSockets` folders each with a server listening (a tmux server's,
 * an ssh agent's), and `plain` folders of files. Returns once the dead sockets are old enough to
 * count as dead (`SETTLED_S`).
 *
 * @returns what closes the listeners (their socket files go with them)
 */
export async function crowd(
  dir: string,
  n = { repos: 20, deadSockets: 100, liveSockets: 5, plain: 300 },
): Promise<() => void> {
  for (let i = 0; i < n.repos; i++) {
    const repo = join(dir, `repo-${i}`);
    await Deno.mkdir(join(repo, ".git", "hooks"), { recursive: true });
    await Deno.mkdir(join(repo, ".git", "objects"));
    await Deno.mkdir(join(repo, ".git", "refs"));
    await Deno.writeTextFile(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(repo, ".git", "config"), "[core]\n\tbare = false\n");
    await Deno.writeTextFile(join(repo, "README"), "x\n");
  }
  const made = Date.now();
  for (let i = 0; i < n.deadSockets; i++) {
    const path = join(dir, `magi-approve-old-${i}`, "approve.sock");
    await Deno.mkdir(join(path, ".."));
    // Deno removes a socket file when its listener closes: a second name for it stays, dead.
    const listener = Deno.listen({ transport: "unix", path: `${path}.live` });
    Deno.linkSync(`${path}.live`, path);
    listener.close();
  }
  const listeners: Deno.Listener[] = [];
  for (let i = 0; i < n.liveSockets; i++) {
    const path = join(dir, i === 0 ? "tmux-0" : `ssh-agent-${i}`, i === 0 ? "default" : "agent");
    await Deno.mkdir(join(path, ".."));
    listeners.push(Deno.listen({ transport: "unix", path }));
  }
  for (let i = 0; i < n.plain; i++) {
    await Deno.mkdir(join(dir, `plain-${i}`));
    await Deno.writeTextFile(join(dir, `plain-${i}`, "f.txt"), "x\n");
  }
  // Long settled, as on a machine in use: folders changed just now are read again each call.
  const past = new Date(Date.now() - 60_000);
  for (const e of Deno.readDirSync(dir)) Deno.utimeSync(join(dir, e.name), past, past);
  Deno.utimeSync(dir, past, past);
  const wait = made + SETTLED_S * 1000 + 500 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  return () => listeners.forEach((l) => l.close());
}

/** One row: the samples' median, min and max, in milliseconds added per call. */
export interface SandboxRow {
  temp: "empty" | "crowded";
  samples: number[];
}

/**
 * The sandbox's cost with TMPDIR at an empty and then at a crowded temp folder of the bench's
 * own (both removed after), one {@link SandboxRow} each.
 */
export async function sandboxRows(
  opts: { runs: number; reps: number },
): Promise<SandboxRow[]> {
  const rows: SandboxRow[] = [];
  const before = Deno.env.get("TMPDIR");
  // Removed only at the end: magi's scratch folder, made once per process, lies in the first.
  const made: string[] = [];
  let close = () => {};
  try {
    for (const temp of ["empty", "crowded"] as const) {
      const dir = await Deno.realPath(
        await Deno.makeTempDir({ dir: before ?? "/tmp", prefix: `magi-bench-${temp}-` }),
      );
      made.push(dir);
      if (temp === "crowded") close = await crowd(dir);
      Deno.env.set("TMPDIR", dir);
      const { home, env } = await benchEnv("magi-bench-sandbox-");
      const past = new Date(Date.now() - 60_000);
      Deno.utimeSync(dir, past, past);
      rows.push({ temp, samples: await sandboxAddedMs(home, { ...env, TMPDIR: dir }, opts) });
    }
  } finally {
    close();
    if (before === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", before);
    for (const dir of made.reverse()) await Deno.remove(dir, { recursive: true });
  }
  return rows;
}

/** `median 9.8 ms, min 8.1 ms, max 12.0 ms` of samples in milliseconds. */
export function spread(samples: readonly number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(1)} ms`;
  return `median ${f(sorted[Math.floor(sorted.length / 2)])}, min ${f(sorted[0])}, ` +
    `max ${f(sorted.at(-1)!)}`;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const rows = await sandboxRows({ runs: quick ? 3 : 7, reps: quick ? 10 : 20 });
  for (const row of rows) {
    console.log(
      `sandbox adds to run 'true' (${row.temp} temp folder): ${spread(row.samples)} ` +
        `(target ≤ 15 ms)`,
    );
  }
}
