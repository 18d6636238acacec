/**
 * npm packages loaded on first use instead of at start-up, for code that must stay
 * synchronous (a dynamic `import()` would make it async). `magi tools` then loads none of
 * them. `deno compile` cannot see these loads: scripts/compile.ts includes the packages.
 *
 * @module
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

/**
 * A function that loads the npm package `name` (as `require` does, from this project's
 * `node_modules`) on its first call and returns it on every call.
 *
 * @throws Error (from the first call) when the package cannot be loaded
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => loaded ??= load(name) as T;
}
