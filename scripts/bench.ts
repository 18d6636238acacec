/**
 * `deno task bench`: magi's speed as ratios against a floor measured in the same run, so the
 * figures mean the same on a slow or busy machine. Each figure is the median of several runs,
 * with min and max shown. Prints a Markdown table (the one in README.md).
 *
 * The seven figures of issue 8: warm start, cold discovery, per-call overhead, a Lua call,
 * the pipeline's throughput and peak memory, masking cost, and the `grep` builtin; and the
 * sandbox's per-call cost (`run 'true'` inside against outside, in milliseconds added); and
 * the context figures of issue 15 (scripts/bench_context.ts): tokens sent over a replayed
 * 100-turn session with and without pruning and compaction, and the prefix bytes reusable.
 * and two MCP figures (scripts/bench_mcp_start.ts): a warm start with a hung and a crashed
 * server, and an MCP tool call through the pipeline against the SDK client's own call; and
 * `magi mcp` over stdio (scripts/bench_mcp.ts): `read` and `run 'echo hi'` against a bare SDK
 * server doing the same (issue 21).
 * In-process figures use one long-lived runtime (the way a session calls tools); start-up figures run
 * the real CLI with the permission set of `deno task magi`.
 *
 * Run: `deno task bench` (or `deno run -A scripts/bench.ts [--quick] [--only=warm,call,mcp]`;
 * `--quick` uses fewer runs, 64 MiB instead of 1 GiB, and a smaller grep tree: about a minute;
 * `--only` measures just the rows named, as in `ROWS`).
 *
 * @module
 */
import { join } from "node:path";
import { benchEnv } from "./bench_env.ts";
import { fileURLToPath } from "node:url";
import { grep } from "../lib/sources/builtins/grep.ts";
import { runTool } from "../lib/runtime/run_tool.ts";
import { Masker } from "../lib/pipeline/mask.ts";
import { DiscoveryCache } from "../lib/sources/discovery_cache.ts";
import { Registry } from "../lib/registry/registry.ts";
import { discover } from "../lib/sources/tools_dir.ts";
import type { Tool } from "../lib/core/types.ts";
import { createRuntime, type Runtime } from "../lib/runtime/runtime.ts";
import { RUN_FLAGS } from "./permissions.ts";
import { corpusTexts, falsePositives, fragmentHits } from "./mask_corpus.ts";
import { FRAGMENT } from "../lib/pipeline/fragments.ts";
import { sandboxAddedMs } from "./bench_sandbox.ts";
import { contextFigures } from "./bench_context.ts";
import { hungServerRatios, mcpCallRatios } from "./bench_mcp_start.ts";
import { mcpServeRatios } from "./bench_mcp.ts";
import { buildBundle } from "./bundle.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const quick = Deno.args.includes("--quick");
/**
 * `--only=warm,call,mcp,...`: just these rows (names in {@link ROWS}); all when absent.
 */
const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
/** Row names for `--only`. */
const ROWS = [
  "warm",
  "discovery",
  "pipeline",
  "mask",
  "call",
  "lua",
  "grep",
  "sandbox",
  "context",
  "mcp-start",
  "mcp",
] as const;
if (only) {
  const unknown = only.filter((r) => !(ROWS as readonly string[]).includes(r));
  if (unknown.length > 0) {
    console.error(`Unknown row for --only: ${unknown.join(", ")} (rows: ${ROWS.join(", ")})`);
    Deno.exit(2);
  }
}
/** Whether row `name` is measured in this run. */
const want = (name: typeof ROWS[number]) => !only || only.includes(name);
const RUNS = quick ? 3 : 5;
const MIB = 1048576;

interface Figure {
  /** Its place in issue 8's list (the table's order). */
  order: number;
  what: string;
  floor: string;
  ratios: number[];
  target: string;
  /** Anything else measured with it (peak memory). */
  note?: string;
  /** How a value prints (default: a ratio, "1.23×"). */
  unit?: (n: number) => string;
}

/** How many tools_dir and Lua tools the start-up figures use. */
const DIR_TOOLS = 200;
const LUA_TOOLS = 50;
const CORES = navigator.hardwareConcurrency;
/** Calls per timed sample for the per-call figures (one call is a few milliseconds). */
const CALL_REPS = quick ? 10 : 30;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * CPU milliseconds (user + system) of this process and the children it waited for, from
 * `/proc/self/stat` (0 where there is none).
 */
function ownCpuMs(): number {
  try {
    const text = Deno.readTextFileSync("/proc/self/stat");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return 0;
  }
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
  opts: { reps?: number; runs?: number } = {},
): Promise<number[]> {
  await subject();
  await floor();
  const reps = opts.reps ?? 1;
  const repeated = (fn: () => Promise<unknown>) => async () => {
    for (let i = 0; i < reps; i++) await fn();
  };
  const out: number[] = [];
  for (let i = 0; i < (opts.runs ?? RUNS); i++) {
    out.push((await time(repeated(subject))) / (await time(repeated(floor))));
  }
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

/** The masking false-positive corpus (see `mask_corpus.ts`): hits in it, for the note. */
async function falsePositiveNote(): Promise<string> {
  const texts = await corpusTexts(REPO, (quick ? 2 : 16) * MIB);
  const size = Object.values(texts).reduce((n, t) => n + t.length, 0) / MIB;
  const hits = falsePositives(texts);
  const total = Object.values(hits).reduce((a, b) => a + b, 0);
  const fragments = Object.entries(fragmentHits(texts, [8, 10, 12, 16]))
    .map(([n, h]) => `${h} at ${n}`).join(", ");
  return `false-positive corpus (${size.toFixed(1)} MiB: ${Object.keys(texts).join(", ")}; ` +
    `100 secrets): ${total} hits; fragment runs found at each length: ${fragments} ` +
    `(masking uses ${FRAGMENT})`;
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
  const out = await new Deno.Command(cmd, { args, env, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * `count` tools_dir tools (shell scripts that answer `--help`; every fourth has a
 * schema.json) and `luaCount` Lua tools (ten to a file) under `root`.
 */
async function makeTools(root: string, count: number, luaCount: number): Promise<string[]> {
  const dir = join(root, "tools");
  const bins: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `tool${i}`;
    await Deno.mkdir(join(dir, name), { recursive: true });
    const bin = join(dir, name, name);
    await Deno.writeTextFile(
      bin,
      `#!/bin/sh\ncase "$1" in --help) printf '${name}: print a greeting\\nUsage: ${name} [NAME]\\n';;\n` +
        `*) echo "hello $1";; esac\n`,
      { mode: 0o755 },
    );
    if (i % 4 === 0) {
      await Deno.writeTextFile(
        join(dir, name, "schema.json"),
        JSON.stringify({
          type: "object",
          properties: { name: { type: "string", description: "Whom to greet" } },
          "x-magi": { argv: [{ field: "name" }] },
        }),
      );
    }
    bins.push(bin);
  }
  const lua = join(root, "lua");
  await Deno.mkdir(lua, { recursive: true });
  for (let f = 0; f * 10 < luaCount; f++) {
    const decls = [];
    for (let i = f * 10; i < Math.min(luaCount, f * 10 + 10); i++) {
      decls.push(
        `magi.tool("lua${i}", { description = "Answer ok (${i})", ` +
          `needs = { type = "object", properties = { x = { type = "string" } } }, ` +
          `run = function(args) return "ok" end })`,
      );
    }
    await Deno.writeTextFile(join(lua, `tools${f}.lua`), decls.join("\n") + "\n");
  }
  await Deno.writeTextFile(
    join(root, "config.jsonc"),
    JSON.stringify({ tools_dir: [dir], lua_dirs: [lua], shipped_tools: false }),
  );
  return bins;
}

/** Throws when a tool call failed (a figure of failed calls would mean nothing). */
function succeeded(result: { is_error: boolean; name: string; said: string }): void {
  if (result.is_error) throw new Error(`${result.name} failed: ${result.said.slice(0, 300)}`);
}

/** Removes a result's spill file; a result without one means the call failed. */
async function removeSpill(result: { spill: string | null; said: string }): Promise<void> {
  if (!result.spill) throw new Error(`the call failed: ${result.said.slice(0, 300)}`);
  await Deno.remove(result.spill);
}

/** Peak growth of this process's resident memory (bytes) while `fn` runs, sampled every 5 ms. */
async function peakGrowth(fn: () => Promise<unknown>): Promise<number> {
  const base = Deno.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, Deno.memoryUsage().rss) - base;
}

async function main(): Promise<void> {
  const { home, env } = await benchEnv("magi-bench-");
  const rt = await createRuntime({ cwd: home, env, warn: () => {} });
  const figures: Figure[] = [];
  const volume = (quick ? 64 : 1024) * MIB;
  const bins = await makeTools(home, DIR_TOOLS, LUA_TOOLS);
  const config = join(home, "config.jsonc");

  if (want("warm")) {
    // 1. Warm start: the real CLI, every cache warm, against Deno starting an empty script —
    // as `deno task install` runs it (the bundle, scripts/bundle.ts) and as `deno task magi`.
    const empty = join(home, "empty.ts");
    await Deno.writeTextFile(empty, "");
    const bundleDir = join(REPO, "dist", `bench-${crypto.randomUUID().slice(0, 8)}`);
    const magiArgs = (entry: string) => [
      "run",
      ...RUN_FLAGS,
      "--config",
      join(REPO, "deno.json"),
      entry,
      "tools",
      "--json",
      "--config",
      config,
    ];
    try {
      const starts = [
        { entry: await buildBundle(bundleDir), order: 1, how: "bundled (`deno task install`)" },
        { entry: join(REPO, "main.ts"), order: 1.5, how: "`deno run main.ts` (`deno task magi`)" },
      ];
      // Interleaved: each sample times both starts and the floor back to back, so that the two
      // rows meet the same load.
      const samples = starts.map(() => [] as number[]);
      for (const { entry } of starts) await run("deno", magiArgs(entry), env);
      for (let i = 0; i < RUNS * 2; i++) {
        const times = [];
        for (const { entry } of starts) {
          times.push(await time(() => run("deno", magiArgs(entry), env)));
        }
        const floor = await time(() => run("deno", ["run", empty], env));
        times.forEach((t, j) => samples[j].push(t / floor));
      }
      for (const [j, { order, how }] of starts.entries()) {
        figures.push({
          order,
          what:
            `warm \`magi tools --json\`, ${DIR_TOOLS} tools_dir + ${LUA_TOOLS} Lua tools, ${how}`,
          floor: "`deno run` of an empty script",
          ratios: samples[j],
          target: order === 1 ? "≤ 2.5×" : "—",
        });
      }
    } finally {
      await Deno.remove(bundleDir, { recursive: true }).catch(() => {});
    }
  }

  if (want("discovery")) {
    // 2. Cold discovery: every --help run, in-process, against xargs -P running the same.
    const list = join(home, "bins.txt");
    await Deno.writeTextFile(list, bins.join("\n") + "\n");
    figures.push({
      order: 2,
      what: `cold discovery of ${DIR_TOOLS} tools`,
      floor: `the same \`--help\` calls by \`xargs -P ${CORES}\``,
      ratios: await ratios(
        () =>
          discover({
            dirs: [join(home, "tools")],
            env,
            cache: new DiscoveryCache(undefined),
            warn: () => {},
          }),
        // xargs cannot substitute the command word itself: `env` execs each tool (one tiny exec).
        () => run("sh", ["-c", `xargs -P ${CORES} -I{} env {} --help < '${list}' > /dev/null`]),
      ),
      target: "≤ 1.5×",
    });
  }

  const withTool = (base: Runtime, masker: Masker): Runtime => ({
    ...base,
    masker,
    registry: new Registry([emitterTool(volume)], () => {}),
    spillDir: join(home, "spill"),
  });
  const plain = withTool(rt, new Masker([]));
  if (want("pipeline")) {
    const copyPath = join(home, "copy.out");
    const pipelineRatios = await ratios(
      () => runTool(plain, { name: "emit", args: {}, caller: "person" }).then(removeSpill),
      () => copyToFile(volume, copyPath),
    );
    await Deno.remove(copyPath);
    const growth = await peakGrowth(() =>
      runTool(plain, { name: "emit", args: {}, caller: "person" }).then(removeSpill)
    );
    figures.push({
      order: 5,
      what: `${volume / MIB} MiB through mask + bound + spill`,
      floor: "writing the same bytes to a file",
      ratios: pipelineRatios,
      target: "≤ 3×; memory < 64 MiB",
      note: `peak memory growth ${(growth / MIB).toFixed(1)} MiB`,
    });
  }

  if (want("mask")) {
    const secrets = Array.from(
      { length: 100 },
      (_, i) => ({ name: `SECRET_${i}`, value: crypto.randomUUID() }),
    );
    const maskVolume = Math.min(volume, 256 * MIB);
    const masked = { ...withTool(rt, new Masker(secrets)) };
    masked.registry = new Registry([emitterTool(maskVolume)], () => {});
    const unmasked = { ...plain, registry: masked.registry };
    figures.push({
      order: 6,
      what: `${maskVolume / MIB} MiB with 100 secrets to mask`,
      floor: "the same with none",
      ratios: await ratios(
        () => runTool(masked, { name: "emit", args: {}, caller: "person" }).then(removeSpill),
        () => runTool(unmasked, { name: "emit", args: {}, caller: "person" }).then(removeSpill),
      ),
      target: "< 2×; false-positive corpus 0 hits",
      note: await falsePositiveNote(),
    });
  }

  if (want("call")) {
    const toolsDir = join(home, "tools");
    await Deno.mkdir(join(toolsDir, "hello"), { recursive: true });
    const hello = join(toolsDir, "hello", "hello");
    await Deno.writeTextFile(hello, "#!/bin/sh\n# hello — say hi.\n# hello\necho hi\n", {
      mode: 0o755,
    });
    // The sandbox off: what it adds is row 8's figure, not the pipeline's.
    const unsandboxed = join(home, "unsandboxed.jsonc");
    await Deno.writeTextFile(unsandboxed, JSON.stringify({ sandbox: { mode: "off" } }));
    const withHello = await createRuntime({
      cwd: home,
      env,
      toolsDirs: [toolsDir],
      configFlag: unsandboxed,
      warn: () => {},
    });
    const subject = () =>
      runTool(withHello, { name: "hello", args: {}, caller: "person" }).then(succeeded);
    const floor = () => new Deno.Command(hello, { stdout: "piped" }).output();
    const callRatios = await ratios(subject, floor, { reps: CALL_REPS });
    // CPU time too (this process and the children it waited for), which load disturbs less.
    const cpu = { subject: [] as number[], floor: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      for (const [which, fn] of [["subject", subject], ["floor", floor]] as const) {
        const before = ownCpuMs();
        for (let j = 0; j < CALL_REPS; j++) await fn();
        cpu[which].push((ownCpuMs() - before) / CALL_REPS);
      }
    }
    figures.push({
      order: 3,
      what: "a tools_dir tool call through the pipeline (sandbox off)",
      floor: "spawning the same program directly",
      ratios: callRatios,
      target: "≤ 1.3×",
      note: `CPU ms a call (this process and its children), medians: ${
        median(cpu.subject).toFixed(2)
      } against ${median(cpu.floor).toFixed(2)} (${
        (median(cpu.subject) / median(cpu.floor)).toFixed(2)
      }×)`,
    });
  }

  if (want("lua")) {
    // 4. A trivial Lua tool against a trivial builtin (reading a one-line file).
    const small = join(home, "small.txt");
    await Deno.writeTextFile(small, "one line\n");
    const withLua = await createRuntime({
      cwd: home,
      env,
      configFlag: config,
      warn: () => {},
    });
    figures.push({
      order: 4,
      what: "a trivial Lua tool call",
      floor: "a trivial builtin call (`read` of a one-line file)",
      ratios: await ratios(
        () => runTool(withLua, { name: "lua0", args: {}, caller: "person" }).then(succeeded),
        () =>
          runTool(withLua, { name: "read", args: { path: small }, caller: "person" }).then(
            succeeded,
          ),
        { reps: CALL_REPS },
      ),
      target: "—",
    });
  }

  if (want("grep")) {
    // 7. The grep builtin against GNU grep on the same tree.
    const tree = join(REPO, "node_modules", quick ? "diff" : ".deno");
    const sink = () => Promise.resolve();
    figures.push({
      order: 7,
      what: `builtin \`grep function\` over ${quick ? "node_modules/diff" : "node_modules"}`,
      floor: "GNU `grep -rn` on the same tree",
      ratios: await ratios(
        () =>
          grep.run({ pattern: "function", paths: [tree] }, {
            cwd: REPO,
            env: {},
            timeoutMs: 600_000,
            signal: new AbortController().signal,
            roots: ["/"],
            said: sink,
          }),
        () =>
          new Deno.Command("grep", { args: ["-rn", "function", tree], stdout: "null" }).output(),
      ),
      target: "—",
    });
  }

  if (want("sandbox")) {
    // 8. The sandbox's cost per call: `run 'true'` inside workspace-write against outside.
    figures.push({
      order: 8,
      what: "`run 'true'` in the workspace-write sandbox",
      floor: "the same call unsandboxed (ms added)",
      ratios: await sandboxAddedMs(home, env, { runs: RUNS, reps: CALL_REPS }),
      target: "≤ +15 ms",
      unit: (n) => `+${n.toFixed(1)} ms`,
    });
  }

  if (want("context")) {
    // 9, 10. Context: tokens sent over a replayed 100-turn session, and prefix reuse.
    const { kept, whole } = await contextFigures();
    figures.push({
      order: 9,
      what: "tokens sent, replayed 100-turn session (12 KB results, 32k window)",
      floor: "the same without pruning and compaction",
      ratios: [kept.tokens / whole.tokens],
      target: "—",
      note: `${kept.tokens} against ${whole.tokens} tokens (characters / 3.5), ` +
        `${kept.compactions} prune or compaction steps`,
    });
    figures.push({
      order: 10,
      what: "request bytes repeating the previous request's prefix (same session)",
      floor: `with pruning and compaction (without: ${(whole.reuse * 100).toFixed(1)} %)`,
      ratios: [kept.reuse],
      target: "—",
      unit: (n) => `${(n * 100).toFixed(1)} %`,
    });
  }

  if (want("mcp-start")) {
    // 11, 12. MCP (issue 17): start-up with a hung and a crashed server; per-call cost.
    figures.push({
      order: 11,
      what: "warm `magi tools` with a hung and a crashed MCP server",
      floor: "the same config without them",
      ratios: await hungServerRatios(home, env, ratios, RUNS),
      target: "≤ 1.2×",
    });
    figures.push({
      order: 12,
      what: "an MCP tool call through the pipeline (fixture `pid`)",
      floor: "the same call by the SDK client directly",
      ratios: await mcpCallRatios(home, env, ratios, CALL_REPS),
      target: "—",
    });
  }

  if (want("mcp")) {
    // 13, 14. `magi mcp` over stdio against a bare SDK server (issue 21), the sandbox off (row 8
    // is its cost).
    const serve = await mcpServeRatios(join(home, "mcp-serve"), {
      runs: RUNS,
      calls: quick ? 100 : 300,
      sandbox: false,
    });
    for (const [i, c] of serve.entries()) {
      figures.push({
        order: 13 + i,
        what: `\`${c.what}\` over stdio \`magi mcp\` (sandbox off)`,
        floor: c.against,
        ratios: c.ratios,
        target: "≤ 1.5×",
      });
    }
  }

  await Deno.remove(home, { recursive: true });
  const ratio = (n: number) => n.toFixed(2) + "×";
  figures.sort((a, b) => a.order - b.order);
  console.log(`| measured | against | median | min | max | target |`);
  console.log(`| --- | --- | --- | --- | --- | --- |`);
  for (const f of figures) {
    const fmt = f.unit ?? ratio;
    const min = Math.min(...f.ratios);
    const max = Math.max(...f.ratios);
    console.log(
      `| ${f.what} | ${f.floor} | ${fmt(median(f.ratios))} | ${fmt(min)} | ${
        fmt(max)
      } | ${f.target} |`,
    );
  }
  for (const f of figures) if (f.note) console.log(`\n${f.what}: ${f.note}.`);
  console.log(`\n${RUNS} runs each; ${Deno.build.target}, ${navigator.hardwareConcurrency} cores.`);
}

if (import.meta.main) await main();
