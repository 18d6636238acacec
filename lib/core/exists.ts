/**
 * Whether a path names anything: one copy of the try-a-stat test.
 *
 * @example
 * ```ts
 * import { pathExists } from "./exists.ts";
 * pathExists("/"); // true
 * pathExists("/no/such/path"); // false
 * ```
 *
 * @module
 */

/**
 * Whether `path` exists. Any failure to look (missing, no permission on a folder above)
 * counts as no.
 *
 * @param opts.followLinks look at what a symlink points to (a dangling link: false); by
 *   default a link itself counts, dangling or not
 */
export function pathExists(path: string, opts: { followLinks?: boolean } = {}): boolean {
  try {
    if (opts.followLinks) Deno.statSync(path);
    else Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Node's `existsSync`, loaded on first use (Deno's Node layer is not loaded at start). */
let nodeExists: ((path: string) => boolean) | undefined;

/**
 * Whether `stat(path)` would succeed (symlinks followed: a dangling link, or a folder above
 * that cannot be searched, is no) — answered without the exception `Deno.statSync` throws on
 * a miss, which costs most of it (24 µs against 3 µs here), once a process has asked more
 * than a few times. A check before a `stat` or `realpath` that would fail alike.
 *
 * @example
 * ```ts
 * import { statReaches } from "./exists.ts";
 * statReaches("/"); // true
 * statReaches("/no/such/path"); // false
 * ```
 */
export function statReaches(path: string): boolean {
  // Loading Node's `fs` (and `process`) costs about 10 ms: a short-lived command's few
  // look-ups (a warm start's PATH search) are cheaper with the exception.
  if (nodeExists === undefined && ++asked <= EXCEPTIONS_FIRST) {
    return pathExists(path, { followLinks: true });
  }
  // deno-lint-ignore no-explicit-any
  nodeExists ??= (globalThis as any).process?.getBuiltinModule?.("node:fs")?.existsSync ??
    ((p: string) => pathExists(p, { followLinks: true }));
  return nodeExists!(path);
}

/** How many look-ups take the exception's way before Node's `fs` is loaded for the rest. */
const EXCEPTIONS_FIRST = 64;
let asked = 0;
