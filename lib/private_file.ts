/**
 * Private files: what magi keeps under its state and cache folders is readable by its owner
 * only — files 0600 in folders 0700 — and is written whole or not at all (a temporary file in
 * the same folder, then a rename or a link).
 *
 * @module
 */
import { dirname } from "node:path";

/**
 * Makes `dir` (and any missing parents) and sets `dir` itself to 0700, whatever the umask or
 * an earlier, looser magi left.
 *
 * @throws Deno.errors.* when the folder cannot be made or its mode cannot be set
 */
export function privateDirSync(dir: string): void {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  Deno.chmodSync(dir, 0o700);
}

function tempBeside(path: string): string {
  return `${path}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
}

function writeTemp(path: string, data: string | Uint8Array, ownFolder = true): string {
  if (ownFolder) privateDirSync(dirname(path));
  const tmp = tempBeside(path);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  Deno.writeFileSync(tmp, bytes, { createNew: true, mode: 0o600 });
  Deno.chmodSync(tmp, 0o600);
  return tmp;
}

/**
 * Replaces `path` with `data` atomically: readers see the old file or the new one, never a
 * part. The file is 0600, its folder 0700.
 *
 * @throws Deno.errors.* when it cannot be written (nothing is left behind)
 */
export function writePrivateFileSync(path: string, data: string | Uint8Array): void {
  const tmp = writeTemp(path, data);
  try {
    Deno.renameSync(tmp, path);
  } catch (error) {
    Deno.removeSync(tmp);
    throw error;
  }
}

/**
 * Creates `path` with `data` only when it does not exist yet, atomically (a hard link of a
 * complete temporary file): of two processes racing, one creates it and the other gets
 * `Deno.errors.AlreadyExists` and reads the winner's.
 *
 * @param ownFolder whether the folder is magi's own, to be made and set to 0700; false for a
 *   folder the person named (it must exist and keeps its mode)
 * @throws Deno.errors.AlreadyExists when `path` exists; Deno.errors.* when it cannot be written
 */
export function createPrivateFileSync(
  path: string,
  data: string | Uint8Array,
  ownFolder = true,
): void {
  const tmp = writeTemp(path, data, ownFolder);
  try {
    Deno.linkSync(tmp, path);
  } finally {
    Deno.removeSync(tmp);
  }
}
