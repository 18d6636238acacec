/**
 * Looking a program up on a PATH, the one way magi does it (the policy, the sandbox, spawning,
 * the tool links, peers): the first folder in order that holds an executable regular file of
 * that name.
 *
 * @module
 */
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { systemTempDir } from "./temp.ts";
import { statReaches } from "./exists.ts";

/** How the PATH's folders are read. */
export interface LookUpOptions {
  /**
   * Where an empty or relative PATH entry points (as a shell reads it). Without it, such
   * entries are passed over.
   */
  cwd?: string;
  /** Folders to pass over (absolute, as resolved). */
  skip?: (dir: string) => boolean;
}

/** Whether `path` is a regular file with an execute bit (following symlinks). */
export function isExecutableFile(path: string): boolean {
  // A miss (most folders of a PATH) without the exception of a failed stat.
  if (!statReaches(path)) return false;
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The first executable `name` in `path`'s folders.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findProgram } from "./program.ts";
 * assert.ok(findProgram("sh", "/nowhere:/bin:/usr/bin")?.endsWith("/sh"));
 * assert.equal(findProgram("no-such-program-here", "/bin"), undefined);
 * ```
 *
 * @param path a PATH value (`:`-separated); undefined is an empty PATH
 * @returns the candidate's path as found (not resolved through symlinks), or undefined
 */
export function findProgram(
  name: string,
  path: string | undefined,
  opts: LookUpOptions = {},
): string | undefined {
  for (const entry of (path ?? "").split(delimiter)) {
    let dir: string;
    if (isAbsolute(entry)) dir = entry;
    else if (opts.cwd === undefined) continue;
    else dir = resolve(opts.cwd, entry === "" ? "." : entry);
    if (opts.skip?.(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Where the host look-up may not take programs from: the folders a sandboxed call can write
 * (the roots; the system temp folder is always added), and the PATH folders inside them that
 * every sandbox keeps read-only nonetheless (`~/go/bin` with HOME a root: runs_later.ts's
 * `pathFolders`, as protected).
 */
export interface HostScope {
  /** Real absolute folders whose programs are not taken (the roots). */
  avoid: readonly string[];
  /** Real absolute PATH folders inside `avoid` taken all the same: read-only in the sandbox. */
  kept?: readonly string[];
}

/**
 * The host look-up: PATH's folders that no sandboxed program can have filled, for every
 * program magi itself starts outside the sandbox by a bare name (the default peer, a peer or
 * MCP server named by name, what start-up discovery runs). Kept are the absolute entries
 * whose real path (the nearest existing folder's, for one that does not exist yet) lies
 * outside every folder of `scope.avoid` and the system temp folder — what `workspace-write`
 * makes writable, where a model's `run` could plant `node_modules/.bin/casper` or `bin/sh` —
 * or is one of `scope.kept` (not in the temp folder).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hostPath } from "./program.ts";
 * const path = "./bin:/opt/p/node_modules/.bin:/usr/bin";
 * assert.equal(hostPath(path, { avoid: ["/opt/p"] }), "/usr/bin");
 * ```
 *
 * @param path a PATH value (`:`-separated); undefined is an empty PATH
 * @returns the PATH value kept, in order (possibly "")
 */
export function hostPath(path: string | undefined, scope: HostScope): string {
  const temp = realOrLexical(systemTempDir());
  const inside = (p: string, a: string) => p === a || p.startsWith(a.endsWith("/") ? a : a + "/");
  return (path ?? "").split(delimiter).filter((entry) => {
    if (!isAbsolute(entry)) return false;
    const real = realOrLexical(entry);
    if (inside(real, temp)) return false;
    return scope.kept?.includes(real) || !scope.avoid.some((a) => inside(real, a));
  }).join(delimiter);
}

/**
 * {@link findProgram} on {@link hostPath}: the program magi may start on the host for a bare
 * name.
 *
 * @returns the candidate's path as found, or undefined
 */
export function hostProgram(
  name: string,
  path: string | undefined,
  scope: HostScope,
): string | undefined {
  return findProgram(name, hostPath(path, scope));
}

/** The real path of `path`, or of its nearest existing folder with the rest appended. */
function realOrLexical(path: string): string {
  const abs = resolve(path);
  for (let dir = abs, rest = "";; rest = join(basename(dir), rest), dir = dirname(dir)) {
    try {
      return join(Deno.realPathSync(dir), rest);
    } catch {
      if (dirname(dir) === dir) return abs;
    }
  }
}
