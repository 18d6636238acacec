/**
 * The allowed roots (SPEC S6, S8.1): the folders the file builtins (`read`, `write`, `edit`,
 * `grep`) may touch. A path is checked after `..` and symlinks are resolved, so neither
 * `../x`, an absolute path nor a symlink inside a root leads outside it. This is the one
 * place the check lives.
 *
 * @module
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { lenientReal } from "./fs_facts.ts";
import { sessionTempDir } from "../confinement/session_temp.ts";

export { systemTempDir } from "../core/temp.ts";

/** A path that passed the check. */
export interface AllowedPath {
  /** The path with `..` and every symlink resolved: what the builtin should open. */
  real: string;
}

/**
 * Resolves a path like `realpath -m`, as the kernel would open it: component by component,
 * each symlink resolved where it stands — so `..` after a symlink leaves the symlink's target
 * (`link/../x` with `link` → `/etc` is `/x`), not the folder holding the link. Components
 * that do not exist are kept as written (a `..` after one goes back up).
 *
 * @param path an absolute path (a relative one is taken from the process's folder)
 */
export function realPathLenient(path: string): string {
  return lenientReal({ real: systemRealPath }, isAbsolute(path) ? path : resolve(path));
}

function systemRealPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * A command's path word from its folder, as the program will open it: `base` and `path`
 * joined without collapsing `..` first (see {@link realPathLenient}).
 *
 * @param base an absolute folder
 */
export function physicalPath(base: string, path: string): string {
  return realPathLenient(isAbsolute(path) ? path : `${base}/${path}`);
}

/**
 * The default and configured roots as real absolute paths. The default is the start directory
 * and the session's own temp folder (`sessionTempDir`), never the shared system temp folder:
 * other programs' repositories and sockets lie there.
 *
 * @param configured the config's `roots` (absolute paths), or undefined for the default
 * @param startDir the session's starting directory (part of the default)
 * @returns distinct real paths, in order
 */
export function effectiveRoots(configured: string[] | undefined, startDir: string): string[] {
  const raw = configured ?? [startDir, sessionTempDir()];
  return [...new Set(raw.map((r) => realPathLenient(resolve(startDir, r))))];
}

/** Whether `path` is `root` or inside it (both real absolute paths). */
export function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith(".." + sep) && rel !== ".." && !isAbsolute(rel);
}

/**
 * Checks one path against the roots.
 *
 * @param path the path as the call gave it (absolute, or relative to `cwd`)
 * @param cwd the call's working directory (absolute)
 * @param roots real absolute paths, from {@link effectiveRoots}
 * @param action the verb for the message, such as "read" or "write"
 * @returns the resolved path, or an error message naming the roots, such as
 *   `Cannot read "../x": outside the allowed roots ("/home/a/p", "/tmp/magi-sockets-1000/magi-tmp-x")`
 */
export function checkPath(
  path: string,
  cwd: string,
  roots: readonly string[],
  action: string,
): AllowedPath | string {
  const real = realPathLenient(resolve(cwd, path));
  if (roots.some((root) => isInside(real, root))) return { real };
  const list = roots.map((r) => `"${r}"`).join(", ");
  const where = real === path ? "" : ` (it resolves to "${real}")`;
  return `Cannot ${action} "${path}"${where}: outside the allowed roots (${list}); ` +
    "config key `roots` sets them";
}
