/**
 * Private files: what magi writes under its state, cache, sessions and spill folders is
 * readable by its user alone — files 0600 (programs 0700), folders 0700 — whatever the
 * umask, and caches are replaced whole (a temp file renamed over the old one), so a reader
 * never sees half of one.
 *
 * @module
 */
import { dirname } from "node:path";

/** The mode of magi's folders. */
export const DIR_MODE = 0o700;
/** The mode of magi's files. */
export const FILE_MODE = 0o600;

/** Removes group and other bits from a path's mode, if it has any (best effort). */
function tighten(path: string, mode: number): void {
  try {
    const info = Deno.statSync(path);
    if (info.mode !== null && (info.mode & 0o077) !== 0) Deno.chmodSync(path, mode);
  } catch {
    // Not ours to change (another user's folder, a read-only file system): left as it is.
  }
}

/**
 * Makes a folder and its missing parents with mode 0700, and tightens the folder itself
 * to 0700 when it already existed with group or other bits.
 *
 * @throws Deno.errors.* when the folder cannot be made
 */
export function privateDir(path: string): string {
  Deno.mkdirSync(path, { recursive: true, mode: DIR_MODE });
  tighten(path, DIR_MODE);
  return path;
}

/** {@link privateDir}, asynchronously. */
export async function privateDirAsync(path: string): Promise<string> {
  await Deno.mkdir(path, { recursive: true, mode: DIR_MODE });
  tighten(path, DIR_MODE);
  return path;
}

/**
 * Opens a file for appending, creating it with mode 0600 (an existing one is tightened to
 * 0600). Its folder must exist.
 *
 * @throws Deno.errors.* when it cannot be opened
 */
export function openPrivateAppend(path: string): Deno.FsFile {
  const file = Deno.openSync(path, { append: true, create: true, mode: FILE_MODE });
  tighten(path, FILE_MODE);
  return file;
}

/**
 * Replaces a file's content atomically: writes a temp file (mode 0600) beside it, then
 * renames it over `path`. The folder is made with {@link privateDir}.
 *
 * @throws Deno.errors.* when it cannot be written (the temp file is removed)
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  privateDir(dirname(path));
  const tmp = `${path}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    const options = { createNew: true, mode: FILE_MODE };
    if (typeof data === "string") Deno.writeTextFileSync(tmp, data, options);
    else Deno.writeFileSync(tmp, data, options);
    Deno.renameSync(tmp, path);
  } catch (error) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never made */ }
    throw error;
  }
}

/**
 * Creates `path` with `data` only when it does not exist yet, atomically (a hard link of a
 * complete 0600 temp file): of two processes racing, one creates it and the other gets
 * `Deno.errors.AlreadyExists` and reads the winner's.
 *
 * @param ownFolder whether the folder is magi's own, to be made and set to 0700; false for a
 *   folder the person named (it must exist and keeps its mode)
 * @throws Deno.errors.AlreadyExists when `path` exists; Deno.errors.* when it cannot be written
 */
export function createPrivateFile(
  path: string,
  data: string | Uint8Array,
  ownFolder = true,
): void {
  if (ownFolder) privateDir(dirname(path));
  const tmp = `${path}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  Deno.writeFileSync(tmp, bytes, { createNew: true, mode: FILE_MODE });
  try {
    Deno.chmodSync(tmp, FILE_MODE);
    Deno.linkSync(tmp, path);
  } finally {
    Deno.removeSync(tmp);
  }
}
