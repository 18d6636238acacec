/**
 * What the sandbox's arguments were read from, to reuse them while nothing there changed
 * (SPEC S8.3), each noted *before* it is looked at, so a change after the look always shows:
 *
 * - a path whose kind or real path is asked: its `lstat` identity (device, inode, mode, owner,
 *   birth time), which any replacement, removal or creation changes (a symlink's target is
 *   fixed for its inode);
 * - a folder whose entries or a file whose text is read: its `stat` identity and times. An
 *   entry made or removed moves the folder's modification and change times; `ctime` cannot be
 *   set back (`utimes` moves it on to now), so a folder whose `mtime` was set back shows too,
 *   unless within the same second as its last change (Deno gives `ctime` in whole seconds). A
 *   modification time within a clock tick of the reading could hide a change in the same
 *   tick: a reading that saw so recent a change is not kept (`settled` is false).
 *
 * @module
 */
import { dirname, resolve } from "node:path";

/** How long before the reading a folder's last change must lie for its times to be trusted. */
const SETTLED_MS = 100;
/** A folder unchanged this long stands for its missing entries (see `Reads.entry`). */
const QUIET_MS = 2000;

/** The file-system state one computation depended on. */
export class Reads {
  /** "e" or "c", a space, the path → its signature before it was looked at. */
  readonly seen = new Map<string, string>();
  /** False when a folder or file read had changed too recently, or a path's walk disagreed. */
  settled = true;
  readonly start = Date.now();

  /** `lstat` answers already asked during this reading (each path looked at once). */
  private readonly lstats = new Map<string, Deno.FileInfo | undefined>();

  /** `stat` answers of the folders above the paths looked at, each taken before any of them. */
  private readonly parents = new Map<string, Deno.FileInfo | undefined>();

  /**
   * Notes a path whose kind is looked at; returns its `lstat` (undefined: missing). A missing
   * path in a folder that has not changed for a while is noted through that folder (one
   * `stat` for all its missing entries, where an `lstat` of a missing path costs an error).
   */
  entry(path: string): Deno.FileInfo | undefined {
    if (this.lstats.has(path)) return this.lstats.get(path);
    const dir = dirname(path);
    if (!this.parents.has(dir)) this.parents.set(dir, info(dir, false));
    const st = info(path, true);
    this.lstats.set(path, st);
    const above = this.parents.get(dir);
    if (!st && above?.isDirectory && this.start - (above.mtime?.getTime() ?? NaN) > QUIET_MS) {
      this.seen.set(`c ${dir}`, this.seen.get(`c ${dir}`) ?? signature(above));
    } else this.seen.set(`e ${path}`, identity(st));
    return st;
  }

  /**
   * Notes a folder whose entries, or a file whose text, is read (following symlinks);
   * returns its `stat` (undefined: missing).
   */
  contents(path: string): Deno.FileInfo | undefined {
    const st = info(path, false);
    const key = `c ${path}`;
    if (this.seen.has(key)) return st;
    this.seen.set(key, signature(st));
    if (st && !(this.start - (st.mtime?.getTime() ?? NaN) > SETTLED_MS)) this.settled = false;
    return st;
  }

  /** Whether every path noted is as it was (one `stat` or `lstat` each). */
  unchanged(): boolean {
    for (const [key, sig] of this.seen) {
      const entry = key[0] === "e";
      const st = info(key.slice(2), entry);
      if ((entry ? identity(st) : signature(st)) !== sig) return false;
    }
    return true;
  }
}

function info(path: string, link: boolean): Deno.FileInfo | undefined {
  try {
    return link ? Deno.lstatSync(path) : Deno.statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * What a path is, not what it holds: a folder's new entries leave it alone. The birth time
 * (where the file system keeps one) tells a new file from an old one with the same inode
 * number; a symlink's times, which nothing but its making sets, tell a new link from an old.
 */
function identity(st: Deno.FileInfo | undefined): string {
  if (!st) return "missing";
  const times = st.isSymlink ? [st.mtime?.getTime(), st.ctime?.getTime()] : [];
  return [st.dev, st.ino, st.mode, st.uid, st.birthtime?.getTime(), ...times].join(":");
}

function signature(st: Deno.FileInfo | undefined): string {
  if (!st) return "missing";
  return [st.dev, st.ino, st.mode, st.uid, st.size, st.mtime?.getTime(), st.ctime?.getTime()]
    .join(":");
}

/** The computation being recorded, if any (all of it synchronous). */
let current: Reads | undefined;

/** Runs `f`, noting into a new {@link Reads} what the sandbox's path helpers look at. */
export function recording<T>(f: () => T): { value: T; reads: Reads } {
  const outer = current;
  const reads = new Reads();
  current = reads;
  try {
    return { value: f(), reads };
  } finally {
    current = outer;
  }
}

/** `lstat(path)`, noted while recording; undefined when the path is missing. */
export function lstatNoted(path: string): Deno.FileInfo | undefined {
  return current ? current.entry(path) : info(path, true);
}

/** Notes, while recording, that `path`'s contents get read (a file's text, a folder's entries). */
export function noteContents(path: string): void {
  current?.contents(path);
}

/**
 * `stat(path)` of a folder whose entries get read (noted as {@link noteContents}); undefined
 * when it is missing.
 */
export function statNoted(path: string): Deno.FileInfo | undefined {
  return current ? current.contents(path) : info(path, false);
}

/**
 * `realpath(path)`, noting every folder whose entry it follows (each symlink's, and those of
 * what it points to); undefined when the path cannot be resolved. When recording and the
 * walk disagrees with the system's answer, the reading is not kept.
 */
export function realNoted(path: string): string | undefined {
  if (current) {
    // The walk notes as it goes; with no symlink on the way its answer is the system's. Past
    // a symlink, the system answers, and a walk that disagrees keeps the reading from reuse.
    const links = { met: false };
    const walked = walk(resolve(path), 0, links);
    if (!links.met) return walked;
    const system = systemReal(path);
    if (walked !== system) current.settled = false;
    return system;
  }
  return systemReal(path);
}

function systemReal(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

function walk(path: string, hops: number, links: { met: boolean }): string | undefined {
  const parts = path.split("/").filter((p) => p !== "");
  let at = "/";
  for (let i = 0; i < parts.length; i++) {
    const next = at === "/" ? `/${parts[i]}` : `${at}/${parts[i]}`;
    const st = current!.entry(next);
    if (!st) return undefined;
    if (st.isSymlink) {
      links.met = true;
      if (hops > 40) return undefined;
      let target: string;
      try {
        target = Deno.readLinkSync(next);
      } catch {
        return undefined;
      }
      return walk(resolve(at, target, ...parts.slice(i + 1)), hops + 1, links);
    }
    at = next;
  }
  return at;
}
