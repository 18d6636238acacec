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
 * the caller states the module's type, as `lateImport<typeof import("./x.ts")>(new URL(…))`.
 *
 * @throws Error when the module cannot be loaded
 */
export function lateImport<T>(url: URL): Promise<T> {
  return import(url.href) as Promise<T>;
}
