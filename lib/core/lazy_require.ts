/**
 * Code loaded on first use instead of at start-up.
 *
 * - {@link lazyRequire}: npm packages for code that must stay synchronous (a dynamic
 *   `import()` would make it async). `magi tools` then loads none of them. Not in a body
 *   Worker: it reads `node_modules`, which a Worker may not.
 * - {@link lateImport}: this project's modules that Deno must not even prepare at start-up.
 *   Before the first line runs, Deno reads and parses the whole graph of every
 *   `import("literal")` (the provider SDKs behind `magi run`, the MCP SDK): a specifier known
 *   only at run time keeps those graphs out of `magi tools`.
 *
 * `deno compile` sees neither: scripts/compile.ts includes the late modules, and embeds
 * `node_modules` whole.
 *
 * @module
 */
import { sourceUrl } from "./source_root.ts";

type Require = (name: string) => unknown;
let required: Require | undefined;

/**
 * `require` for this project's `node_modules`, made at its first use: importing `node:module`
 * at start-up costs about 10 ms, more than the rest of a warm `magi tools` start.
 * `process.getBuiltinModule` (Node's API, which Deno has) gives it synchronously.
 *
 * @param name an npm package or a path inside one, such as "ajv/dist/2020"
 * @throws Error when the package cannot be loaded
 */
export function requireModule(name: string): unknown {
  if (!required) {
    // deno-lint-ignore no-explicit-any
    const nodeModule = (globalThis as any).process.getBuiltinModule("node:module");
    required = nodeModule.createRequire(import.meta.url) as Require;
  }
  return required(name);
}

/**
 * A function that loads the npm package `name` (as `require` does, from this project's
 * `node_modules`) on its first call and returns it on every call.
 *
 * @throws Error (from the first call) when the package cannot be loaded
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => loaded ??= requireModule(name) as T;
}

/**
 * Imports one of this project's modules by URL, known only at run time (see the module doc);
 * the caller states the module's type and names it from the repository's folder, as
 * `lateImport<typeof import("./x.ts")>(sourceUrl(PATH))` with PATH such as "lib/cli/tools.ts"
 * (lib/core/source_root.ts; a bundled build's entry carries it instead, {@link useBundledModules}).
 *
 * @throws Error when the module cannot be loaded
 */
export function lateImport<T>(url: URL): Promise<T> {
  const own = bundled?.get(url.href);
  return (own ? own() : import(url.href)) as Promise<T>;
}

/** The late modules a bundled build carries inside itself: URL → its import. */
let bundled: Map<string, () => Promise<unknown>> | undefined;

/**
 * Called by a bundled build's entry (lib/cli/bundle_entry.ts) before anything runs: each of
 * these late modules is then imported from the bundle's own chunks, never from the source
 * file (a second copy of a module, with its own state: the masker of lib/pipeline/out.ts).
 *
 * @param modules a path from the repository's folder (as {@link sourceUrl} takes it) → a
 *   literal `import()` of that module
 */
export function useBundledModules(modules: Record<string, () => Promise<unknown>>): void {
  bundled = new Map(Object.entries(modules).map(([path, load]) => [sourceUrl(path).href, load]));
}

/** Whether magi runs as its bundled build (lib/cli/bundle_entry.ts called {@link useBundledModules}). */
export function runsBundled(): boolean {
  return bundled !== undefined;
}
