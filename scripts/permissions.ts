/**
 * magi's Deno permission set, in one place: `deno task magi`, `deno task install`,
 * `deno task compile`, the shims magi writes for its builtins, the tests that run the CLI and
 * the benchmark all use {@link RUN_FLAGS} (a test checks that the tasks in deno.json spell
 * the same flags). Never `-A`: no FFI, no system information, no remote imports, and no prompt (`--no-prompt`: a
 * denied permission is an error, not a question on the terminal).
 *
 * Each permission is whole, because what magi touches is decided at run time, not build
 * time: the files are the config's `roots` (magi checks them itself, SPEC S8), the programs
 * are the tools found in `tools_dir`, the hosts are the configured providers and MCP servers.
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

/**
 * The flags for `deno run`, `deno install` and `deno compile`, in this order: the
 * permissions, `--no-prompt`, and `--unstable-worker-options` (builtin and Lua bodies run in
 * Workers whose permissions the policy narrows; lib/policy/body_worker.ts).
 */
export const RUN_FLAGS: readonly string[] = [
  ...PERMISSIONS.map(([flag]) => flag),
  "--no-prompt",
  "--unstable-worker-options",
];
