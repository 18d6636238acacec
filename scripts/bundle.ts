/**
 * `deno run -A scripts/bundle.ts [--out DIR]`: magi's bundled build, what `deno task install`
 * runs. `deno bundle` (esbuild, from npm: it works offline here) writes
 * lib/cli/bundle_entry.ts and everything it imports into one entry file and shared chunks;
 * each module magi imports late (lib/core/lazy_require.ts) becomes a chunk of its own. A warm
 * `magi tools` then loads about five files instead of about 120 modules (measured: about 40 ms
 * less CPU, scripts/bench.ts).
 *
 * - npm packages stay outside (`--external` for each of deno.json's imports): they load from
 *   `node_modules` as under `deno run main.ts`, so the bundle runs with this checkout's
 *   deno.json.
 * - The entry's `import("./chunk.js")` of each late module is rewritten to an `import()` of a
 *   URL made at run time: Deno reads the whole graph of a literal `import()` before the first
 *   line runs (the provider and MCP SDKs), which the late imports exist to avoid.
 * - The output folder lies two folders below the repository (default `dist/bundle/`), as
 *   every module of lib/ does, so `new URL("../../", import.meta.url)` still names the
 *   repository (lib/core/source_root.ts); the sandbox's bridge script, found beside its
 *   module, is copied in.
 *
 * Exits 0 with the entry's path on stdout; otherwise 1 with `deno bundle`'s output.
 *
 * @module
 */
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The bundle's folder by default, and the entry file in it. */
export const BUNDLE_DIR = join(REPO, "dist", "bundle");
export const BUNDLE_ENTRY = "bundle_entry.js";

/** A literal `import()` of one of the bundle's own files. */
const CHUNK_IMPORT = /\bimport\("(\.\/[A-Za-z0-9_-]+\.js)"\)/g;

/**
 * Builds the bundle into `out` (replacing what was there).
 *
 * @returns the entry file's path
 * @throws Error when `deno bundle` fails, `out` does not lie two folders below the
 *   repository, or the entry's late imports are not the {@link LATE_MODULES} count
 */
export async function buildBundle(out = BUNDLE_DIR): Promise<string> {
  const depth = relative(REPO, resolve(out)).split("/");
  if (depth.length !== 2 || depth[0] === "..") {
    throw new Error(`Cannot bundle into "${out}": it must lie two folders below ${REPO}`);
  }
  const config = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json")));
  const external = Object.keys(config.imports).flatMap((name) => [
    "--external",
    name,
    "--external",
    `${name}/*`,
  ]);
  await Deno.remove(out, { recursive: true }).catch(() => {});
  const built = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--code-splitting",
      ...external,
      "--config",
      join(REPO, "deno.json"),
      "--outdir",
      out,
      join(REPO, "lib", "cli", "bundle_entry.ts"),
    ],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!built.success) {
    throw new Error(
      `deno bundle failed: ${decoder.decode(built.stderr)}${decoder.decode(built.stdout)}`,
    );
  }
  const entry = join(out, BUNDLE_ENTRY);
  const text = Deno.readTextFileSync(entry);
  const { LATE_MODULES } = await import("../lib/cli/bundle_entry.ts");
  const count = [...text.matchAll(CHUNK_IMPORT)].length;
  if (count !== Object.keys(LATE_MODULES).length) {
    throw new Error(
      `${entry}: ${count} late imports of chunks, expected ${Object.keys(LATE_MODULES).length}`,
    );
  }
  Deno.writeTextFileSync(
    entry,
    text.replace(CHUNK_IMPORT, (_, file) => `import(new URL("${file}", import.meta.url).href)`),
  );
  // The domain bridge and the filter it starts its program under, beside the bundle.
  for (const name of ["sandbox_bridge.js", "seccomp_exec.js"]) {
    Deno.copyFileSync(join(REPO, "lib", "confinement", name), join(out, name));
  }
  return entry;
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
  try {
    console.log(await buildBundle(values.out));
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(1);
  }
}
