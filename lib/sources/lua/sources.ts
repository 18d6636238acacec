/**
 * Gathering the Lua declarations and the peers' tools for the runtime: where declaration
 * files live, which peers are configured, and the caches that keep a warm start from
 * starting the Lua engine or running `<peer> tools --json`.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import type { Config } from "../../config/load.ts";
import { stringList } from "../../config/load.ts";
import { shippedToolsDir } from "../../exec/shipped.ts";
import { configuredPeers, type PeerListing, peerTools } from "../peers.ts";
import type { HostScope } from "../../core/program.ts";
import { StampCache, stampCachePath } from "../../core/stamp_cache.ts";
import type { Tool, Warn } from "../../core/types.ts";
import { type CachedFile, loadLuaTools, LUA_CACHE_VERSION } from "./declarations.ts";
import { knownShipped } from "./shipped_manifest.ts";
import type { LuaConfinement } from "../../exec/lua/worker_host.ts";
import { magiDir } from "../../core/xdg.ts";

/** What the two sources need. */
export interface DeclaredSourcesOptions {
  config: Config;
  cwd: string;
  /** magi's own environment (for XDG folders and PATH). */
  env: Record<string, string>;
  /** The environment `<peer> tools --json` runs with. */
  childEnv: Record<string, string>;
  builtins: readonly Tool[];
  /** Where peers named by name are not looked up (the roots; `hostProgram`). */
  host: HostScope;
  /** Runs Lua bodies in Workers under the policy (see `loadLuaTools`). */
  confine?: LuaConfinement;
  warn: Warn;
}

/** The Lua and peer tools, and the builtin and peer entries Lua declarations re-describe. */
export interface DeclaredTools {
  tools: Tool[];
  replaced: Set<Tool>;
}

/**
 * The folders Lua declarations are read from, earliest first (an earlier file wins a name):
 * the project's `.magi/tools/` (nearest above the working directory), the config's
 * `lua_dirs`, the user's `$XDG_CONFIG_HOME/magi/tools/`, and the `*.lua` files shipped in
 * magi's `tools/` (unless `shipped_tools` is false).
 */
export function luaDirs(config: Config, cwd: string, env: Record<string, string>): string[] {
  const dirs: string[] = [];
  const project = projectToolsDir(cwd);
  if (project) dirs.push(project);
  dirs.push(...stringList(config.values.lua_dirs));
  const own = magiDir(env, "config");
  if (own) dirs.push(join(own, "tools"));
  if (config.values.shipped_tools) dirs.push(shippedToolsDir());
  const seen = new Set<string>();
  return dirs.filter((d) => {
    const real = realPath(d);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

function projectToolsDir(cwd: string): string | undefined {
  for (let dir = resolve(cwd);; dir = dirname(dir)) {
    const candidate = join(dir, ".magi", "tools");
    try {
      if (Deno.statSync(candidate).isDirectory) return candidate;
    } catch {
      // Not here; look further up.
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** Lists the peers' tools, then loads the Lua declarations (which may name peers and builtins). */
export async function declaredTools(opts: DeclaredSourcesOptions): Promise<DeclaredTools> {
  const v = opts.config.values;
  const peers = configuredPeers(
    v.peers,
    opts.config.origins.peers,
    opts.env,
    opts.warn,
    opts.host,
  );
  const peerCache = new StampCache<PeerListing>(stampCachePath(opts.env, "peers"), "peers-2");
  const fromPeers = await peerTools({
    peers,
    env: opts.childEnv,
    cwd: opts.cwd,
    cache: peerCache,
    warn: opts.warn,
  });
  peerCache.save();
  const luaCache = new StampCache<CachedFile>(
    stampCachePath(opts.env, "lua-declarations"),
    LUA_CACHE_VERSION,
  );
  // The project's own declarations came with a repository: they get an engine of their own
  // (so they cannot change what the person's declarations see, such as `magi.exec` or the
  // string library), are marked, never re-describe anything, and rank after the builtins.
  const project = projectToolsDir(opts.cwd);
  const projectReal = project ? realPath(project) : undefined;
  const dirs = luaDirs(opts.config, opts.cwd, opts.env);
  const common = {
    builtins: opts.builtins,
    peers,
    peerTools: fromPeers,
    memoryBytes: v["limits.lua_memory_bytes"],
    cache: luaCache,
    known: knownShipped(shippedToolsDir()),
    confine: opts.confine,
    warn: opts.warn,
  };
  const lua = await loadLuaTools({
    ...common,
    dirs: dirs.filter((d) => realPath(d) !== projectReal),
  });
  const fromProject = projectReal
    ? await loadLuaTools({
      ...common,
      dirs: dirs.filter((d) => realPath(d) === projectReal),
      confine: opts.confine?.forProject?.() ?? opts.confine,
    })
    : { tools: [] };
  luaCache.save();
  for (const tool of fromProject.tools) tool.origin.project = true;
  return { tools: [...lua.tools, ...fromProject.tools, ...fromPeers], replaced: lua.replaced };
}
