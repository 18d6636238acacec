/**
 * Opening, listing and writing files so that a folder or file swapped for a symlink between
 * the roots check and the use cannot carry the operation outside the roots.
 *
 * Deno offers no `openat`, no `O_NOFOLLOW` and no way to ask for an open file's path, so each
 * operation is bracketed by looks instead: before it and several times after it, every
 * component of the checked real path inside the roots is `lstat`ed (each must be a real
 * folder, never a symlink, with the same device and inode, and the folders unmodified: same
 * mtime), and an opened or created file's `fstat` identity must equal what `lstat` finds at
 * its path. A mismatch is retried a few times, then refused as {@link PathChanged}.
 *
 * This narrows the window; it does not close it. Each look is a separate path lookup, so a
 * process swapping a folder as fast as system calls go (renameat2 RENAME_EXCHANGE, every
 * ~16 µs) can win every look by chance now and then: scripts/bench_symlink_swap.ts measures
 * how often (see the README). Deno's mtimes are milliseconds, too coarse against it. `rename`
 * looks its two paths up one after the other inside the kernel; a swap between them can move
 * the new content into the swapped-in folder (detected afterwards and reported, not undone).
 * Closing it takes `openat2(RESOLVE_BENEATH)` or a mount namespace holding only the roots,
 * neither of which Deno's API reaches.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { isInside } from "../../policy/roots.ts";
import { readFullSync } from "../../core/bytes.ts";

/** Attempts before an operation whose path keeps changing is refused. */
const ATTEMPTS = 3;
/**
 * Looks at the whole path after an open. Each look is another chance to catch a swap; a
 * swapper must win every one (measured in scripts/bench_symlink_swap.ts).
 */
const AFTER_LOOKS = 3;

/** The path changed while it was being used (a component was swapped or moved). */
export class PathChanged extends Error {
  constructor(what = "opened") {
    super(`the path changed while being ${what} (a folder or file was swapped); try again`);
    this.name = "PathChanged";
  }
}

/** A device, pipe or socket where a file was expected (refused without opening it). */
export class NotRegularFile extends Error {
  constructor() {
    super("not a regular file");
    this.name = "NotRegularFile";
  }
}

/** What one component looked like: identity, kind and, for folders in the roots, mtime. */
interface Seen {
  dev: number;
  ino: number;
  kind: "dir" | "file" | "symlink" | "other";
  /** Milliseconds; only for folders inside a root (the ones another process may change). */
  mtime?: number;
}

function seen(info: Deno.FileInfo, pin: boolean): Seen {
  const kind = info.isSymlink
    ? "symlink"
    : info.isDirectory
    ? "dir"
    : info.isFile
    ? "file"
    : "other";
  return {
    dev: info.dev,
    ino: info.ino ?? 0,
    kind,
    mtime: pin && kind === "dir" ? info.mtime?.getTime() ?? 0 : undefined,
  };
}

/** Whether two observations are of the same unchanged thing. */
function same(a: Seen, b: Seen): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.kind === b.kind && a.mtime === b.mtime;
}

/**
 * `fstat` of an open file. In a body Worker Deno also checks read permission for it: a file
 * opened while a folder was a symlink to outside the roots is refused, even after the swap
 * back. Measured under a fast swapper it is not a proof (reads escaped with it as the only
 * check; it seems to use a path Deno resolved itself around the open), so it is one more
 * look: a refusal is {@link PathChanged}.
 */
function fstat(file: Deno.FsFile): Deno.FileInfo {
  try {
    return file.statSync();
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw new PathChanged();
    throw error;
  }
}

/** Whether an `fstat` result is the thing `lstat` saw. */
function isIt(info: Deno.FileInfo, s: Seen): boolean {
  return info.dev === s.dev && (info.ino ?? 0) === s.ino;
}

/**
 * Every component of `real` from its outermost root down, `lstat`ed: all but the last must be
 * real folders. Only these can be swapped by another process confined to the roots (changing
 * a component takes writing in its parent), and only these are readable in a body Worker.
 *
 * @param real an absolute path with no `..` and no symlinks, inside a root (from the check)
 * @param roots real paths; folders inside them get their mtime pinned
 * @param unpinned a folder whose mtime is not pinned (the one being written into)
 * @throws PathChanged when a folder in the path is a symlink, or the path is in no root;
 *   Deno errors (NotFound, NotADirectory) when a component is missing or not a folder
 */
function chain(real: string, roots: readonly string[], unpinned?: string): Seen[] {
  let top: string | undefined;
  for (const root of roots) {
    if (isInside(real, root) && (top === undefined || root.length < top.length)) top = root;
  }
  if (top === undefined) throw new PathChanged();
  const rest = top === real ? [] : real.slice(top === "/" ? 1 : top.length + 1).split("/");
  const out: Seen[] = [];
  let at = top;
  for (let i = 0; i <= rest.length; i++) {
    if (i > 0) at = at === "/" ? "/" + rest[i - 1] : at + "/" + rest[i - 1];
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(at);
    } catch (error) {
      // A folder the Worker may not read lies above the policy's roots (`roots` was wider):
      // no confined process can swap it either.
      if (i < rest.length && error instanceof Deno.errors.NotCapable) continue;
      throw error;
    }
    // A root's own mtime is not pinned: a shared folder such as /tmp changes all the time.
    const s = seen(info, at !== unpinned && !roots.includes(at));
    if (i < rest.length && s.kind === "symlink") throw new PathChanged();
    if (i < rest.length && s.kind !== "dir") throw new Deno.errors.NotADirectory(at);
    out.push(s);
  }
  return out;
}

/** An observation without its mtime. */
function bare(s: Seen): Seen {
  return { ...s, mtime: undefined };
}

function sameChain(a: Seen[], b: Seen[]): boolean {
  return a.length === b.length && a.every((s, i) => same(s, b[i]));
}

/** Runs `attempt` until it returns a value; PathChanged and NotFound are retried. */
function retrying<T>(what: string, attempt: () => T | undefined): T {
  // Made when it is thrown: an error's stack costs more than a read of a small file.
  let last: unknown = undefined;
  for (let i = 0; i < ATTEMPTS; i++) {
    try {
      const value = attempt();
      if (value !== undefined) return value;
      last = undefined;
    } catch (error) {
      // A swapped folder can make a path briefly missing or not a folder.
      const transient = error instanceof PathChanged ||
        error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
      if (!transient) throw error;
      last = error;
    }
  }
  throw last ?? new PathChanged(what);
}

/**
 * Opens the file or folder at `real` for reading, verified to be the one the symlink-free
 * path names (see the module doc). A FIFO, socket or device is refused without opening it.
 *
 * @param real the checked real path
 * @returns the open file and its `fstat` info; the caller closes it
 * @throws PathChanged; Deno errors (NotFound, PermissionDenied); NotRegularFile for a
 *   device, pipe or socket
 */
export function openChecked(
  real: string,
  roots: readonly string[],
): { file: Deno.FsFile; info: Deno.FileInfo } {
  return retrying("opened", () => {
    const before = chain(real, roots);
    const last = before[before.length - 1];
    if (last.kind === "symlink") throw new PathChanged();
    if (last.kind === "other") throw new NotRegularFile();
    const file = Deno.openSync(real);
    try {
      const info = fstat(file);
      if (isIt(info, last) && looksSame(real, roots, before)) return { file, info };
    } catch (error) {
      file.close();
      throw error;
    }
    file.close();
    return undefined;
  });
}

/** Whether {@link AFTER_LOOKS} fresh looks at the path all match `before`. */
function looksSame(real: string, roots: readonly string[], before: Seen[]): boolean {
  for (let i = 0; i < AFTER_LOOKS; i++) if (!sameChain(before, chain(real, roots))) return false;
  return true;
}

/**
 * A file opened for a search whose checks wait until its content first matters (grep: most
 * files never match, and in a body Worker the looks cost several times the open).
 * `prove()` must be called before anything read from the file affects a result.
 *
 * @returns the open file (the caller closes it) and its proof, which throws PathChanged
 *   when the file is not the checked one (outside the roots), NotRegularFile when it is no
 *   regular file
 * @throws as {@link openChecked}
 */
export function openDeferred(
  real: string,
  roots: readonly string[],
): { file: Deno.FsFile; prove: () => void } {
  // The caller saw a regular file here (a folder listing); one swapped for a pipe since
  // would hold the open until the call's time limit.
  const file = Deno.openSync(real);
  let proved = false;
  return {
    file,
    prove: () => {
      if (proved) return;
      const info = fstat(file);
      if (!info.isFile) throw new NotRegularFile();
      // No look before the open: every look after it must find the open file there.
      // No look came before the open, so more come after it (paid only by files that match).
      const first = chain(real, roots);
      let same = isIt(info, first[first.length - 1]);
      for (let i = 0; same && i < 2 * AFTER_LOOKS; i++) {
        same = sameChain(first, chain(real, roots));
      }
      if (!same) throw new PathChanged();
      proved = true;
    },
  };
}

/**
 * A file's whole content and mode, opened with {@link openChecked}; undefined for a folder.
 */
export function readChecked(
  real: string,
  roots: readonly string[],
): { bytes: Uint8Array; mode: number } | undefined {
  const { file, info } = openChecked(real, roots);
  const mode = info.mode ?? 0o644;
  try {
    if (info.isDirectory) return undefined;
    const out = new Uint8Array(info.size);
    const at = readFullSync(file, out);
    // A file that grew since fstat: read the rest too.
    const rest: Uint8Array[] = [];
    const buf = new Uint8Array(64 * 1024);
    for (let n = file.readSync(buf); n !== null; n = file.readSync(buf)) rest.push(buf.slice(0, n));
    if (rest.length === 0) return { bytes: out.subarray(0, at), mode };
    const all = new Uint8Array(at + rest.reduce((s, r) => s + r.length, 0));
    all.set(out.subarray(0, at));
    let pos = at;
    for (const r of rest) {
      all.set(r, pos);
      pos += r.length;
    }
    return { bytes: all, mode };
  } finally {
    file.close();
  }
}

/**
 * A folder's entries, listed while its path stays the same symlink-free folder.
 *
 * @throws PathChanged; Deno errors
 */
export function listChecked(real: string, roots: readonly string[]): Deno.DirEntry[] {
  return retrying("listed", () => {
    // The folder's own entries may change while it is listed (its mtime is not pinned).
    const before = chain(real, roots, real);
    if (before[before.length - 1].kind !== "dir") throw new Deno.errors.NotADirectory(real);
    const entries = [...Deno.readDirSync(real)];
    return sameChain(before, chain(real, roots, real)) ? entries : undefined;
  });
}

/**
 * Makes the missing folders of `dir` one at a time, each checked as made inside a verified
 * folder.
 *
 * @param dir a real path inside the roots whose existing part has no symlinks
 * @throws PathChanged; Deno errors
 */
export function mkdirChecked(dir: string, roots: readonly string[]): void {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    try {
      Deno.lstatSync(at);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || dirname(at) === at) throw error;
      missing.unshift(at);
      at = dirname(at);
    }
  }
  for (const path of missing) {
    const parent = dirname(path);
    retrying("made", () => {
      const before = chain(parent, roots, parent);
      let made = false;
      try {
        Deno.mkdirSync(path);
        made = true;
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
      try {
        // Deno's own look at where the folder is (in a body Worker), then the path's.
        using dirFile = Deno.openSync(path);
        fstat(dirFile);
        const after = chain(path, roots, parent);
        if (sameChain(before, after.slice(0, -1)) && after[after.length - 1].kind === "dir") {
          return true;
        }
      } catch (error) {
        if (!(error instanceof PathChanged) || !made) throw error;
        // Made where a swapped folder led: remove it (only ever an empty folder).
        const until = Date.now() + STRAY_PATIENCE_MS;
        while (Date.now() < until) {
          try {
            Deno.removeSync(path);
            break;
          } catch {
            // Not reachable now.
          }
          pause();
        }
        throw error;
      }
      return undefined;
    });
  }
}

/**
 * Writes a file atomically: a temp file (random name, created exclusively) in the verified
 * folder gets the bytes, is flushed and renamed over the target, so a reader (or a crash)
 * sees the old file or the new one, never a part. The folder's path is verified before the
 * temp file is made, after it is made, before the rename and after it.
 *
 * @param real the target's checked real path (its folder exists)
 * @param mode permission bits for the file, such as 0o644
 * @throws PathChanged; Error when the folder changed during the rename (the content may have
 *   landed elsewhere); Deno errors when the folder cannot be written
 */
export function writeChecked(
  real: string,
  roots: readonly string[],
  bytes: Uint8Array,
  mode: number,
): void {
  const dir = dirname(real);
  // A name near the 255-byte limit leaves no room for a prefix and a suffix.
  const name = new TextEncoder().encode(basename(real)).length > 200 ? "" : basename(real);
  let tmp = "";
  const { file, info, before } = retrying("written", () => {
    tmp = join(dir, `.${name}.magi-${crypto.randomUUID().slice(0, 13)}.tmp`);
    const before = chain(dir, roots, dir);
    const file = Deno.openSync(tmp, { write: true, createNew: true, mode: 0o600 });
    let info: Deno.FileInfo | undefined;
    try {
      info = fstat(file);
      let here = isIt(info, seen(Deno.lstatSync(tmp), false));
      for (let i = 0; here && i < AFTER_LOOKS; i++) {
        here = sameChain(before, chain(dir, roots, dir)) &&
          isIt(info, seen(Deno.lstatSync(tmp), false));
      }
      if (here) return { file, info, before };
    } catch {
      // Not where it was meant to be: below.
    }
    file.close();
    // Made where a swapped folder led (empty: nothing was written to it yet). Its name is
    // random and new, so a file of that name is this one: look for it while the swapping
    // goes on.
    removeStray(tmp, info, STRAY_PATIENCE_MS);
    return undefined;
  });
  try {
    try {
      let at = 0;
      while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
      file.syncSync();
      Deno.chmodSync(tmp, mode & 0o7777);
      // The write took a while: folders in the roots (/tmp, say) may have changed meanwhile
      // for other reasons, so identities count here.
      const still = sameChain(before.map(bare), chain(dir, roots, dir).map(bare)) &&
        isIt(fstat(file), seen(Deno.lstatSync(tmp), false));
      if (!still) throw new PathChanged("written");
      Deno.renameSync(tmp, real);
    } catch (error) {
      // Where a swap may have led: the same identity is looked for while the swapping goes on.
      removeStray(tmp, info, STRAY_PATIENCE_MS);
      throw error;
    }
    // The temp file is still open: fstat and the path are looked at again. A swap between
    // rename's two path lookups can have moved it outside.
    let landed: boolean;
    try {
      landed = isIt(fstat(file), seen(info, false));
    } catch {
      landed = false;
    }
    if (!landed) {
      throw new Error(
        `a folder in the path was swapped during the rename: the new content may have been ` +
          `moved outside the roots, under the name "${basename(real)}"`,
      );
    }
    let checked = false;
    {
      try {
        // Folders in the roots may have changed meanwhile (their mtimes): identities count.
        checked = sameChain(before.map(bare), chain(dir, roots, dir).map(bare)) &&
          isIt(info, seen(Deno.lstatSync(real), false));
      } catch {
        // Below.
      }
    }
    if (!checked) {
      throw new Error(
        `the folder "${dir}" changed while the file was renamed into place; ` +
          "it may have been replaced since, or written elsewhere",
      );
    }
  } finally {
    file.close();
  }
}

/** How long a temp file made through a swapped folder is looked for, in milliseconds. */
const STRAY_PATIENCE_MS = 200;

const nap = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread for a tenth of a millisecond (a swapping process gets a turn). */
function pause(): void {
  Atomics.wait(nap, 0, 0, 0.1);
}

/**
 * Removes the temp file at `path`: the one created (same identity) or, when its identity is
 * unknown (made outside, where fstat was refused), any file of that random name. Looks again
 * for up to `patienceMs` while it is not found there.
 */
function removeStray(path: string, info: Deno.FileInfo | undefined, patienceMs = 0): void {
  const until = Date.now() + patienceMs;
  do {
    try {
      const found = Deno.lstatSync(path);
      if (found.isFile && (info === undefined || isIt(info, seen(found, false)))) {
        Deno.removeSync(path);
        return;
      }
    } catch {
      // Not there (now).
    }
    if (patienceMs > 0) pause();
  } while (Date.now() < until);
}
