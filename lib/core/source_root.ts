/**
 * Where magi's own source files are, for the modules it loads by URL at run time (Worker
 * entries, a body process's server, modules imported late: lib/core/lazy_require.ts).
 *
 * The root is two folders above this module. A bundled build (scripts/bundle.ts) lies two
 * folders below the repository too (`dist/bundle/`), so the same URL names the repository in
 * both; a path from the root names a file the same way in both, where a path from a
 * module's own folder would point into the bundle's folder.
 *
 * @module
 */

/** The repository's folder (a `file:` URL ending in `/`; inside a compiled binary, its copy). */
export const SOURCE_ROOT: URL = new URL("../../", import.meta.url);

/**
 * The URL of one of magi's source files.
 *
 * @param path from the repository's folder, such as "lib/exec/lua/worker_entry.ts"
 */
export function sourceUrl(path: string): URL {
  return new URL(path, SOURCE_ROOT);
}
