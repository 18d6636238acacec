/**
 * Where the files shipped with magi live, and everything a `deno compile` binary does
 * differently from `deno run` — in one place.
 *
 * Under `deno run` (or `deno install`) the shipped `tools/` folder is the one beside
 * `main.ts`. In a compiled binary, `import.meta.url` points into the binary's embedded file
 * system: Deno can read files there (Lua declarations, `schema.json`, wasmoon's `glue.wasm`
 * and the rest of `node_modules`), but no program can be executed from it. So the shipped
 * tools are copied once into a real folder, `$XDG_CACHE_HOME/magi/shipped/<key>/tools`
 * (`~/.cache/…` without XDG_CACHE_HOME), keyed by magi's version and the binary's size and
 * modification time, and run from there. {@link realCopy} does the same for any other
 * embedded file that must be a real one.
 *
 * @module
 */
import { DIR_MODE, FILE_MODE, privateDir } from "../core/private.ts";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../core/version.ts";
import { pathExists } from "../core/exists.ts";
import { xdgBase } from "../core/xdg.ts";

/** Whether this process is a `deno compile` binary. */
export const COMPILED: boolean = Deno.build.standalone;

/** The shipped tools folder as built in: beside `main.ts`, or inside the compiled binary. */
const BUILT_IN_TOOLS = fileURLToPath(new URL("../../tools", import.meta.url));

let copied: string | undefined;

/**
 * The shipped tools folder (absolute), real and executable: beside `main.ts`, or in a
 * compiled binary a copy of the embedded folder made on first use (see the module doc).
 *
 * @throws Error when a compiled binary cannot write its copy (no cache folder, no space)
 */
export function shippedToolsDir(): string {
  if (!COMPILED) return BUILT_IN_TOOLS;
  return copied ??= realCopy(BUILT_IN_TOOLS, "tools");
}

/** The folder real copies go to: `$XDG_CACHE_HOME/magi/shipped/<version>-<build>`. */
function copiesDir(): string {
  const base = xdgBase(Deno.env.toObject(), "cache") ??
    join(Deno.makeTempDirSync({ prefix: "magi-" }), ".cache");
  let build = "run";
  try {
    const info = Deno.statSync(Deno.execPath());
    build = `${info.size}-${info.mtime?.getTime() ?? 0}`;
  } catch {
    // No stat of our own executable: the version alone keys the copies.
  }
  return join(base, "magi", "shipped", `${VERSION}-${build}`);
}

/**
 * A real copy of an embedded file or folder (recursively), at `<copies>/<name>`, made once
 * and reused while the binary is the same; files that start with `#!` or sit at
 * `<dir>/<tool>/<tool>` (the tools_dir layout) are made executable. Outside a compiled
 * binary it works the same on real files (tests use `into`).
 *
 * @param from the embedded (or real) path to copy
 * @param name the copy's name under the copies folder
 * @param into the copies folder (default: under `$XDG_CACHE_HOME/magi/shipped/`)
 * @returns the copy's absolute path
 * @throws Error when the copy cannot be written
 */
export function realCopy(from: string, name: string, into: string = copiesDir()): string {
  const target = join(into, name);
  try {
    Deno.statSync(target);
    return target;
  } catch {
    // Not copied yet.
  }
  privateDir(into);
  const tmp = Deno.makeTempDirSync({ dir: into, prefix: `.${name}-` });
  try {
    const copy = join(tmp, name);
    copyTree(from, copy);
    try {
      Deno.renameSync(copy, target);
    } catch (error) {
      // Another magi made the same copy first: use theirs.
      if (!pathExists(target, { followLinks: true })) throw error;
    }
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
  return target;
}

function copyTree(from: string, to: string): void {
  if (!Deno.statSync(from).isDirectory) {
    copyFile(from, to);
    return;
  }
  Deno.mkdirSync(to, { recursive: true, mode: DIR_MODE });
  for (const entry of Deno.readDirSync(from)) {
    copyTree(join(from, entry.name), join(to, entry.name));
  }
}

function copyFile(from: string, to: string): void {
  const bytes = Deno.readFileSync(from);
  const shebang = bytes[0] === 0x23 && bytes[1] === 0x21;
  const toolLayout = dirname(from).endsWith(`/${basename(from)}`);
  // magi's cache is private: programs 0700, other files 0600 (lib/core/private.ts).
  Deno.writeFileSync(to, bytes, { mode: shebang || toolLayout ? 0o700 : FILE_MODE });
}
