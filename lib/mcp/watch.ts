/**
 * Watching the files tools come from while serving, so a change reaches clients as
 * `notifications/tools/list_changed`: the tools_dir folders (any change inside), the Lua
 * declaration folders and the config folders (`*.lua` and config files).
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { stringList } from "../config/load.ts";
import { luaDirs } from "../sources/lua/sources.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { magiDir } from "../core/xdg.ts";

/** Milliseconds of quiet after the last change before `onChange` runs. */
export const SETTLE_MS = 300;

/** What to watch: folders whose every change counts, and folders where only some files do. */
export interface WatchPlan {
  toolDirs: string[];
  configDirs: string[];
}

/** The folders a runtime's tools come from (those that exist). */
export function watchPlan(rt: Runtime): WatchPlan {
  const env = rt.env;
  const userConfig = magiDir(env, "config");
  const configDirs = new Set<string>(rt.config.files.map((f) => dirname(f)));
  if (userConfig) configDirs.add(userConfig);
  configDirs.add(join(rt.session.cwd, ".magi"));
  for (const dir of luaDirs(rt.config, rt.session.cwd, env)) configDirs.add(dir);
  return {
    toolDirs: stringList(rt.config.values.tools_dir).filter(isDir),
    configDirs: [...configDirs].filter(isDir),
  };
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function counts(path: string): boolean {
  const name = basename(path);
  return name.endsWith(".lua") || name.endsWith(".jsonc") || name.endsWith(".json");
}

/**
 * Watches the plan's folders; calls `onChange` once things settle after a change.
 * Returns a function that stops watching.
 */
export function watchSources(plan: WatchPlan, onChange: () => void): () => void {
  const watchers: Deno.FsWatcher[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, SETTLE_MS);
  };
  const follow = async (watcher: Deno.FsWatcher, filter: (path: string) => boolean) => {
    try {
      for await (const event of watcher) {
        if (event.kind !== "access" && event.paths.some(filter)) changed();
      }
    } catch {
      // The watcher was closed or the folder went away.
    }
  };
  for (const dir of plan.toolDirs) {
    const watcher = Deno.watchFs(dir, { recursive: true });
    watchers.push(watcher);
    follow(watcher, () => true);
  }
  for (const dir of plan.configDirs) {
    const watcher = Deno.watchFs(dir, { recursive: false });
    watchers.push(watcher);
    follow(watcher, counts);
  }
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) {
      try {
        watcher.close();
      } catch {
        // Already closed.
      }
    }
  };
}
