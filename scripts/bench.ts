/**
 * `deno task bench`: magi's speed as ratios against a floor measured in the same run, so the
 * figures mean the same on a slow or busy machine. Each figure is the median of several runs,
 * with min and max shown. Prints a Markdown table (the one in README.md).
 *
 * Run: `deno task bench` (or `deno run -A scripts/bench.ts [--quick]`).
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "../lib/pipeline/run_tool.ts";
import { Masker } from "../lib/pipeline/mask.ts";
import { Registry } from "../lib/registry/registry.ts";
import type { Tool } from "../lib/registry/types.ts";
import { createRuntime, type Runtime } from "../lib/runtime.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const quick = Deno.args.includes("--quick");
const RUNS = quick ? 3 : 5;
const MIB = 1048576;

interface Figure {
  what: string;
  floor: string;
  ratios: number[];
  target: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Times `fn` (milliseconds) once. */
async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Ratios of `subject` to `floor`, each pair run back to back so load affects both alike. */
async function ratios(
  subject: () => Promise<unknown>,
  floor: () => Promise<unknown>,
): Promise<number[]> {
  await subject();
  await floor();
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) out.push((await time(subject)) / (await time(floor)));
  return out;
}

/** A tool that emits `bytes` of log lines in 64 KiB chunks, in-process (no child process). */
function emitterTool(bytes: number): Tool {
  const line = "a line of build output that goes on and on, step ok\n";
  const chunk = new TextEncoder().encode(line.repeat(Math.floor(65536 / line.length)));
  return {
    declaration: {
      name: "emit",
      description: "emit",
      parameters: { type: "object", properties: {} },
    },
    origin: { source: "builtin", where: "bench" },
    invoke: async (call) => {
      for (let sent = 0; sent < bytes; sent += chunk.length) await call.emit.said(chunk);
      return { isError: false };
    },
  };
}

async function copyToFile(bytes: number, path: string): Promise<void> {
  const line = "a line of build output that goes on and on, step ok\n";
  const chunk = new TextEncoder().encode(line.repeat(Math.floor(65536 / line.length)));
  using file = await Deno.open(path, { write: true, create: true, truncate: true });
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    let at = 0;
    while (at < chunk.length) at += await file.write(chunk.subarray(at));
  }
}

async function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  const out = await new Deno.Command(cmd, { args, env, stdout: "null", stderr: "null" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed`);
}

async function main(): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "magi-bench-" });
  const env = {
    ...Deno.env.toObject(),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
  };
  const rt = await createRuntime({ cwd: home, env, warn: () => {} });
  const figures: Figure[] = [];
  const volume = (quick ? 64 : 256) * MIB;

  const withTool = (base: Runtime, masker: Masker): Runtime => ({
    ...base,
    masker,
    registry: new Registry([emitterTool(volume)], () => {}),
    spillDir: join(home, "spill"),
  });
  const plain = withTool(rt, new Masker([]));
  const copyPath = join(home, "copy.out");
  const pipelineRatios = await ratios(
    () => runTool(plain, { name: "emit", args: {} }).then((r) => Deno.remove(r.spill!)),
    () => copyToFile(volume, copyPath),
  );
  figures.push({
    what: `${volume / MIB} MiB through mask + bound + spill`,
    floor: "writing the same bytes to a file",
    ratios: pipelineRatios,
    target: "≤ 3×",
  });

  const secrets = Array.from(
    { length: 100 },
    (_, i) => ({ name: `SECRET_${i}`, value: crypto.randomUUID() }),
  );
  const masked = withTool(rt, new Masker(secrets));
  figures.push({
    what: "the same with 100 secrets to mask",
    floor: "the same with none",
    ratios: await ratios(
      () => runTool(masked, { name: "emit", args: {} }).then((r) => Deno.remove(r.spill!)),
      () => runTool(plain, { name: "emit", args: {} }).then((r) => Deno.remove(r.spill!)),
    ),
    target: "< 2×",
  });

  const toolsDir = join(home, "tools");
  await Deno.mkdir(join(toolsDir, "hello"), { recursive: true });
  const hello = join(toolsDir, "hello", "hello");
  await Deno.writeTextFile(hello, "#!/bin/sh\n# hello — say hi.\n# hello\necho hi\n", {
    mode: 0o755,
  });
  const withHello = await createRuntime({ cwd: home, env, toolsDirs: [toolsDir], warn: () => {} });
  figures.push({
    what: "a tools_dir tool call through the pipeline",
    floor: "spawning the same program directly",
    ratios: await ratios(
      () => runTool(withHello, { name: "hello", args: {} }),
      () => new Deno.Command(hello, { stdout: "piped" }).output(),
    ),
    target: "≤ 1.2×",
  });

  const empty = join(home, "empty.ts");
  await Deno.writeTextFile(empty, "");
  const magiArgs = [
    "run",
    "-A",
    "--config",
    join(REPO, "deno.json"),
    join(REPO, "main.ts"),
    "tools",
    "--json",
  ];
  await run("deno", magiArgs, env);
  figures.push({
    what: "warm `magi tools --json`",
    floor: "`deno run` of an empty script",
    ratios: await ratios(() => run("deno", magiArgs, env), () => run("deno", ["run", empty], env)),
    target: "≤ 3×",
  });

  await Deno.remove(home, { recursive: true });
  const fmt = (n: number) => n.toFixed(2) + "×";
  console.log(`| measured | against | median | min | max | target |`);
  console.log(`| --- | --- | --- | --- | --- | --- |`);
  for (const f of figures) {
    const min = Math.min(...f.ratios);
    const max = Math.max(...f.ratios);
    console.log(
      `| ${f.what} | ${f.floor} | ${fmt(median(f.ratios))} | ${fmt(min)} | ${
        fmt(max)
      } | ${f.target} |`,
    );
  }
  console.log(`\n${RUNS} runs each; ${Deno.build.target}, ${navigator.hardwareConcurrency} cores.`);
}

if (import.meta.main) await main();
