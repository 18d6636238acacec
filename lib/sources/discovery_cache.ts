/**
 * The discovery cache (SPEC S4.2): what each tool's `--help` said, keyed by the file's
 * identity (device and inode), size and modification time, so a warm start spawns nothing.
 *
 * @module
 */
import { join } from "node:path";
import type { HelpLines } from "./help.ts";
import { writePrivateFile } from "../core/private.ts";
import { magiDir } from "../core/xdg.ts";

/** What a visit found: the contract's lines, or why the tool was skipped. */
export interface HelpVisit {
  lines?: HelpLines;
  /** Set when the lines came from the script's header instead of `--help`. */
  fromHeader?: boolean;
  /** Why the tool is skipped. */
  skip?: string;
  /** Set when the reason may pass (a time-out, a failure to start): such visits are not cached. */
  transient?: boolean;
}

interface Entry extends HelpVisit {
  stamp: string;
}

/** Where the cache lives: `$XDG_CACHE_HOME/magi/discovery.json` (or `~/.cache/…`). */
export function defaultCachePath(env: Record<string, string>): string | undefined {
  const dir = magiDir(env, "cache");
  return dir ? join(dir, "discovery.json") : undefined;
}

/** A file's identity stamp: device, inode, size and mtime of what the path resolves to. */
export function stampOf(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime() ?? 0}`;
}

/** The cache, read once at start-up and written back when it changed. */
export class DiscoveryCache {
  #entries: Record<string, Entry> = {};
  #dirty = false;

  /** @param path the cache file, or undefined for a cache that lives in memory only */
  constructor(private readonly path: string | undefined) {
    if (!path) return;
    try {
      const data = JSON.parse(Deno.readTextFileSync(path));
      if (data && typeof data === "object" && data.version === 1) this.#entries = data.entries;
    } catch {
      // No cache yet, or an unreadable one: start empty.
    }
  }

  /** The cached visit for a tool file, when its stamp is unchanged. */
  get(bin: string, stamp: string): HelpVisit | undefined {
    const entry = this.#entries[bin];
    if (!entry || entry.stamp !== stamp) return undefined;
    return { lines: entry.lines, fromHeader: entry.fromHeader, skip: entry.skip };
  }

  /** Records a visit. */
  set(bin: string, stamp: string, visit: HelpVisit): void {
    this.#entries[bin] = { stamp, ...visit };
    this.#dirty = true;
  }

  /** Writes the cache back (atomically) if it changed; a failure to write is not an error. */
  save(): void {
    if (!this.path || !this.#dirty) return;
    try {
      writePrivateFile(this.path, JSON.stringify({ version: 1, entries: this.#entries }));
      this.#dirty = false;
    } catch {
      // A read-only home still works, only without a warm start.
    }
  }
}
