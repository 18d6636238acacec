/**
 * The Lua side of the engine: the sandboxed globals every declaration file sees, the `magi`
 * table (`magi.tool`, `magi.exec`, `magi.json`, `magi.cwd`, `magi.env`), a JSON codec, the
 * time-limit hook and the dispatcher that runs one tool call. The Lua is `prelude.lua`,
 * imported as text so a compiled binary carries it.
 *
 * The chunk runs once per engine with the host functions in the global `__magi_host` and
 * returns `load_file(text, chunkname, call)` → JSON, `dispatch(id, call, args)` → JSON,
 * `collect()` (a full garbage collection) and the value a time-limit error carries.
 *
 * @module
 */
import PRELUDE_LUA from "./prelude.lua" with { type: "text" };

/** The chunk name the prelude's own errors carry. */
export const PRELUDE_NAME = "=magi";

/** How many Lua instructions run between two checks of a call's time limit. */
export const HOOK_INSTRUCTIONS = 4096;

/** The global names a declaration file sees (everything else is gone). */
export const SANDBOX_GLOBALS = [
  "_VERSION",
  "assert",
  "error",
  "getmetatable",
  "ipairs",
  "next",
  "pairs",
  "pcall",
  "print",
  "rawequal",
  "rawget",
  "rawlen",
  "rawset",
  "select",
  "setmetatable",
  "tonumber",
  "tostring",
  "type",
  "xpcall",
  "coroutine",
  "math",
  "string",
  "table",
  "utf8",
  "magi",
] as const;

/** The Lua source of the prelude (`prelude.lua`, carried in the module graph as text). */
export const PRELUDE = PRELUDE_LUA
  .replaceAll("__HOOK_INSTRUCTIONS__", String(HOOK_INSTRUCTIONS))
  .replaceAll("__PRELUDE_NAME__", PRELUDE_NAME);
