/**
 * magi's Deno permission set (SPEC S8.2), in one place: `deno task magi` carries exactly
 * {@link PERMISSION_FLAGS} (a test checks deno.json against {@link MAGI_TASK}); `deno task
 * install`, `deno task compile`, the shims magi writes for its builtins, the tests that run
 * the CLI and the benchmark use {@link RUN_FLAGS}. Never `-A`: no FFI, no system
 * information, no imports from the network, no prompt (`--no-prompt`: a denied permission
 * is an error, not a question on the terminal).
 *
 * Each permission is whole, because what magi touches is decided at run time, after Deno's
 * flags are fixed: the roots, `tools_dir`, provider URLs and MCP servers come from the
 * config. What narrows them is per call: the file builtins' and Lua bodies' Workers get
 * permissions derived from the policy (lib/sources/builtins/body_worker.ts,
 * lib/exec/lua/worker_host.ts).
 *
 * Run as a script, prints {@link RUN_FLAGS} on one line.
 *
 * @module
 */

/** Each flag with the reason magi needs it. */
export const PERMISSIONS: readonly (readonly [flag: string, why: string])[] = [
  ["--allow-read", "config files, tools folders, caches, and the files the builtins read"],
  ["--allow-write", "caches, sessions, spill files, the tool-links folder, the builtins' writes"],
  ["--allow-run", "tools_dir tools, peers, MCP servers started as programs, `run`"],
  ["--allow-env", "the environment children inherit, XDG folders, secrets to mask, API keys"],
  ["--allow-net", "providers' HTTPS APIs, MCP servers reached by URL, `magi mcp --http`"],
];

/** The permission flags and `--no-prompt`: what `deno task magi` carries ({@link MAGI_TASK}). */
export const PERMISSION_FLAGS: readonly string[] = [
  ...PERMISSIONS.map(([flag]) => flag),
  "--no-prompt",
];

/** The `deno task magi` command line (deno.json's `"unstable"` adds worker options). */
export const MAGI_TASK = `deno run ${PERMISSION_FLAGS.join(" ")} main.ts`;

/**
 * The flags for `deno run`, `deno install` and `deno compile` of magi:
 * {@link PERMISSION_FLAGS} and `--unstable-worker-options` (builtin and Lua bodies run in
 * Workers whose permissions the policy narrows, lib/sources/builtins/body_worker.ts and
 * lib/exec/lua/worker_host.ts; deno.json says so
 * too, but a command line that names it works with any config).
 */
export const RUN_FLAGS: readonly string[] = [...PERMISSION_FLAGS, "--unstable-worker-options"];

if (import.meta.main) console.log(RUN_FLAGS.join(" "));
