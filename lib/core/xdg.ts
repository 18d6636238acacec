/**
 * magi's own folders by the XDG base-directory rules: `$XDG_CONFIG_HOME`, `$XDG_STATE_HOME`,
 * `$XDG_CACHE_HOME`, else `~/.config`, `~/.local/state`, `~/.cache`. The one place these
 * rules are written; every caller asks here.
 *
 * @module
 */
import { join } from "node:path";

/** The environment the folders are read from (`HOME`, `XDG_*`). */
type Env = Record<string, string | undefined>;

/** Which base folder: config (settings, tools), state (sessions, spills, token), cache. */
export type XdgKind = "config" | "state" | "cache";

const VARIABLE: Record<XdgKind, string> = {
  config: "XDG_CONFIG_HOME",
  state: "XDG_STATE_HOME",
  cache: "XDG_CACHE_HOME",
};
const UNDER_HOME: Record<XdgKind, string[]> = {
  config: [".config"],
  state: [".local", "state"],
  cache: [".cache"],
};

/**
 * The base folder of `kind`: its XDG variable when set and not empty, else the default
 * under `home` (`env.HOME` unless given).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { xdgBase } from "./xdg.ts";
 * assert.equal(xdgBase({ HOME: "/h" }, "state"), "/h/.local/state");
 * assert.equal(xdgBase({ XDG_CACHE_HOME: "/c" }, "cache"), "/c");
 * assert.equal(xdgBase({}, "config"), undefined);
 * ```
 *
 * @returns the absolute folder, or undefined when neither the variable nor a home is known
 */
export function xdgBase(env: Env, kind: XdgKind, home: string): string;
export function xdgBase(env: Env, kind: XdgKind, home?: string): string | undefined;
export function xdgBase(env: Env, kind: XdgKind, home = env.HOME): string | undefined {
  const set = env[VARIABLE[kind]];
  if (set) return set;
  return home ? join(home, ...UNDER_HOME[kind]) : undefined;
}

/** magi's folder of `kind`: `<xdgBase>/magi` (undefined as for {@link xdgBase}). */
export function magiDir(env: Env, kind: XdgKind, home: string): string;
export function magiDir(env: Env, kind: XdgKind, home?: string): string | undefined;
export function magiDir(env: Env, kind: XdgKind, home = env.HOME): string | undefined {
  const base = xdgBase(env, kind, home);
  return base ? join(base, "magi") : undefined;
}

/** The user's own config file: `<config>/magi/config.jsonc`, if a config folder is known. */
export function userConfigFile(env: Record<string, string | undefined>): string | undefined {
  const dir = magiDir(env, "config");
  return dir ? join(dir, "config.jsonc") : undefined;
}
