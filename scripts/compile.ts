/**
 * `deno task compile`: one self-contained `magi` executable (SPEC S10.2) per target, built by
 * `deno compile` with magi's permission set (scripts/permissions.ts, never `-A`) and
 * `--no-prompt`, with the shipped `tools/` (executables and Lua declarations) and the body
 * Worker's entry included. `node_modules` is embedded whole by `deno compile` (wasmoon's
 * `glue.wasm`, and the packages magi loads only on first use with `require`: ajv, diff,
 * ignore, picomatch, jsonc-parser, mvdan-sh). What runs differently inside the binary is
 * handled in lib/shipped.ts.
 *
 * The host target's binary then passes a smoke test (scripts/smoke.ts) from an empty folder
 * with no `deno` on PATH, or it is deleted and the script fails. Other targets cannot run
 * here, so they are built and not tested.
 *
 * `deno compile` needs `denort`, Deno's runtime binary for the target, which it downloads
 * from Deno's release host. This script uses, in order: `DENORT_BIN` (host target only; a
 * real `denort` of the same Deno version — never the `deno` binary itself, which gives a
 * file that only starts Deno's REPL: such a file is refused), then a `denort-<target>.zip`
 * already in Deno's download cache (`$DENO_DIR/dl/release/v<version>/`). A download is
 * attempted only with `--download` (a connected machine: `deno compile` fetches `denort`
 * itself); otherwise, with no `denort` for the host target the script prints one line and
 * exits 3.
 *
 * Usage: `deno task compile [--target TARGET]… [--all] [--output DIR] [--download]`
 * Exit status: 0 built (and passed the smoke test); 1 a build or smoke test failed;
 * 2 usage; 3 no `denort` to be had (nothing built).
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { RUN_FLAGS } from "./permissions.ts";
import { smokeTest } from "./smoke.ts";
import { SOURCE_URL } from "./check_layering.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The exit status when no `denort` can be had. */
export const EXIT_NO_DENORT = 3;

/** The targets `deno compile --target` supports. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/**
 * Paths included beside the module graph (relative to the repository): the shipped tools and
 * every file of lib/ loaded by a URL known only at run time — a Worker's entry, a module
 * imported late (lib/core/lazy_require.ts `lateImport`: every command in lib/cli/, the MCP
 * client SDK, the markdown renderer), the sandbox's bridge script. They are found the way
 * `scripts/check_layering.ts` finds them (`new URL("./x.ts", import.meta.url)`), so a new one
 * cannot be forgotten.
 */
export function includes(): string[] {
  const loaded = new Set<string>();
  const late = /new URL\(\s*["'](\.{1,2}\/[^"']+\.(?:ts|js))["'],\s*import\.meta\.url\s*\)/g;
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(join(REPO, dir))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.name.endsWith(".ts")) {
        const text = Deno.readTextFileSync(join(REPO, path));
        for (const m of text.matchAll(late)) {
          loaded.add(relative(REPO, resolve(REPO, dirname(path), m[1])));
        }
        for (const m of text.matchAll(SOURCE_URL)) loaded.add(m[1]);
      }
    }
  };
  walk("lib");
  const commands = [...Deno.readDirSync(join(REPO, "lib", "cli"))]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => `lib/cli/${e.name}`);
  return ["tools", "lib/sources/builtins", ...[...new Set([...loaded, ...commands])].sort()];
}

/** Where a `denort` comes from for one target, or why there is none. */
export type DenortSource =
  | { kind: "env"; path: string }
  | { kind: "cache"; path: string }
  | { kind: "none"; reason: string };

/** Deno's version, such as "2.9.6". */
export function denoVersion(): string {
  return Deno.version.deno;
}

/** Deno's cache folder (`deno info --json`'s `denoDir`). */
export async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

function realPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Checks a `DENORT_BIN` candidate.
 *
 * @returns null when it may be used, else why not (one line)
 */
export async function refuseDenort(path: string): Promise<string | null> {
  const real = realPath(path);
  if (!real) return `DENORT_BIN "${path}" does not exist`;
  if (real === realPath(Deno.execPath())) {
    return `DENORT_BIN "${path}" is the deno binary itself, not denort`;
  }
  try {
    const out = await new Deno.Command(real, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(10_000),
    }).output();
    if (new TextDecoder().decode(out.stdout).startsWith("deno ")) {
      return `DENORT_BIN "${path}" answers --version like deno: it is deno, not denort`;
    }
  } catch (error) {
    return `DENORT_BIN "${path}" cannot be run (${(error as Error).message})`;
  }
  return null;
}

/** Where the `denort` for `target` comes from (see the module doc). */
export async function findDenort(
  target: string,
  env: Record<string, string>,
  dir: string,
): Promise<DenortSource> {
  const host = target === Deno.build.target;
  if (host && env.DENORT_BIN) {
    const refused = await refuseDenort(env.DENORT_BIN);
    if (refused) return { kind: "none", reason: refused };
    return { kind: "env", path: env.DENORT_BIN };
  }
  const zip = join(dir, "dl", "release", `v${denoVersion()}`, `denort-${target}.zip`);
  if (realPath(zip)) return { kind: "cache", path: zip };
  return {
    kind: "none",
    reason: `no denort for ${target}: ${host ? "DENORT_BIN is not set and " : ""}` +
      `${zip} does not exist (README, "One executable": DENORT_BIN, or --download when connected)`,
  };
}

/** The `deno compile` arguments for one target. */
export function compileArgs(target: string, output: string): string[] {
  return [
    "compile",
    ...RUN_FLAGS,
    "--quiet",
    "--config",
    join(REPO, "deno.json"),
    ...includes().flatMap((p) => ["--include", join(REPO, p)]),
    "--target",
    target,
    "--output",
    output,
    join(REPO, "main.ts"),
  ];
}

async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        target: { type: "string", multiple: true },
        all: { type: "boolean" },
        output: { type: "string" },
        download: { type: "boolean" },
      },
    });
  } catch (error) {
    console.error(`compile: ${(error as Error).message}`);
    return 2;
  }
  const { values } = parsed;
  const targets = values.all ? [...TARGETS] : values.target ?? [Deno.build.target];
  const unknown = targets.find((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown) {
    console.error(`compile: unknown target "${unknown}" (one of ${TARGETS.join(", ")})`);
    return 2;
  }
  const outDir = values.output ?? join(REPO, "dist");
  const env = Deno.env.toObject();
  const dir = await denoDir();
  const sources: DenortSource[] = await Promise.all(targets.map(async (t) => {
    const found = await findDenort(t, env, dir);
    // With --download, deno compile fetches what is missing from Deno's release host.
    return found.kind === "none" && values.download ? { kind: "cache", path: "" } : found;
  }));
  const hostAt = targets.indexOf(Deno.build.target);
  const usable = sources.filter((s) => s.kind !== "none").length;
  if (usable === 0 || (hostAt >= 0 && sources[hostAt].kind === "none")) {
    const first = sources[hostAt >= 0 ? hostAt : 0] as { reason: string };
    console.log(`compile skipped: ${first.reason}`);
    return EXIT_NO_DENORT;
  }
  await Deno.mkdir(outDir, { recursive: true });
  let failed = false;
  for (const [i, target] of targets.entries()) {
    const source = sources[i];
    if (source.kind === "none") {
      console.log(`${target}: skipped, ${source.reason}`);
      continue;
    }
    const output = join(outDir, `magi-${target}${target.includes("windows") ? ".exe" : ""}`);
    const childEnv = { ...env };
    if (source.kind === "env") childEnv.DENORT_BIN = source.path;
    else delete childEnv.DENORT_BIN;
    const built = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(target, output),
      cwd: REPO,
      env: childEnv,
      clearEnv: true,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!built.success) {
      console.log(`${target}: deno compile failed (exit ${built.code})`);
      failed = true;
      continue;
    }
    if (target !== Deno.build.target) {
      console.log(`${target}: built ${output} (not smoke-tested: another platform)`);
      continue;
    }
    const problems = await smokeTest(output);
    if (problems.length > 0) {
      await Deno.remove(output).catch(() => {});
      console.log(`${target}: smoke test failed, ${output} deleted:`);
      for (const p of problems) console.log(`  ${p}`);
      failed = true;
      continue;
    }
    console.log(`${target}: built ${output}; smoke test passed`);
  }
  return failed ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
