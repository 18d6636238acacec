/**
 * Looking a program up on a PATH, the one way magi does it (the policy, the sandbox, spawning,
 * the tool links, peers): the first folder in order that holds an executable regular file of
 * that name.
 *
 * @module
 */
import { delimiter, isAbsolute, join, resolve } from "node:path";
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
