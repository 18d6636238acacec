/**
 * A small JSON cache of what reading a file gave, keyed by the file's path and identity stamp
 * (device, inode, size, mtime — see {@link stampOf}), so a warm start neither starts the Lua
 * engine for unchanged declaration files nor runs `<peer> tools --json` again.
 *
 * @module
 */
import { join } from "node:path";
import { writePrivateFile } from "./private.ts";
import { magiDir } from "./xdg.ts";

/** Where a named cache lives: `$XDG_CACHE_HOME/magi/<name>.json` (or `~/.cache/…`). */
export function stampCachePath(env: Record<string, string>, name: string): string | undefined {
  const dir = magiDir(env, "cache");
  return dir ? join(dir, `${name}.json`) : undefined;
}

/** Values by path, valid while the file's stamp is unchanged. Read once, written on save. */
export class StampCache<T> {
  #entries: Record<string, { stamp: string; value: T }> = {};
  #dirty = false;

  /**
   * @param path the cache file, or undefined for a cache in memory only
   * @param version entries written by another version of the reader are ignored
   */
  constructor(private readonly path: string | undefined, private readonly version: string) {
    if (!path) return;
    try {
      const data = JSON.parse(Deno.readTextFileSync(path));
      if (data?.version === version && typeof data.entries === "object") {
        this.#entries = data.entries;
      }
    } catch {
      // No cache yet, or an unreadable one: start empty.
    }
  }

  /** The cached value for a file, when its stamp is unchanged. */
  get(file: string, stamp: string): T | undefined {
    const entry = this.#entries[file];
    return entry && entry.stamp === stamp ? entry.value : undefined;
  }

  /** The value recorded for a file, whatever its stamp. */
  peek(file: string): T | undefined {
    return this.#entries[file]?.value;
  }

  /** Records a value. */
  set(file: string, stamp: string, value: T): void {
    this.#entries[file] = { stamp, value };
    this.#dirty = true;
  }

  /** Writes the cache back (atomically) if it changed; a failure to write is not an error. */
  save(): void {
    if (!this.path || !this.#dirty) return;
    try {
      writePrivateFile(
        this.path,
        JSON.stringify({ version: this.version, entries: this.#entries }),
      );
      this.#dirty = false;
    } catch {
      // A read-only home still works, only without a warm start.
    }
  }
}
