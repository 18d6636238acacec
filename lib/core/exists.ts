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
