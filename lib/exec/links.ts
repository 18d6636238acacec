/**
 * The tool-links folder (SPEC S4.4): symlinks to the discovered tools, put first on the PATH
 * of every child process so `run 'wc-lines x'` reaches the tool. A name that is already a
 * command on the system PATH is left out: magi never shadows a system utility.
 *
 * @module
 */
import { join } from "node:path";
import { privateDirAsync } from "../core/private.ts";
import { findProgram } from "../core/program.ts";

/** One entry: a symlink to `target`, or a small executable script with `script` as text. */
export type LinkEntry = { name: string; target: string } | { name: string; script: string };

/** Whether `name` is an executable file in one of the PATH folders. */
export function onPath(name: string, path: string): boolean {
  return findProgram(name, path) !== undefined;
}

/**
 * Every name in the PATH folders (one listing per folder): a cheap first test before
 * {@link onPath} stats a name in each folder (hundreds of tools × a dozen folders).
 */
function namesOnPath(path: string): Set<string> {
  const names = new Set<string>();
  for (const dir of path.split(":")) {
    if (!dir) continue;
    try {
      for (const entry of Deno.readDirSync(dir)) names.add(entry.name);
    } catch {
      // A missing or unreadable folder holds nothing.
    }
  }
  return names;
}

async function digest(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(hash).slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Makes (or reuses) the links folder for a set of entries. Folders are named by a digest of
 * their content, so a warm start with the same tools does no file work, and two magi
 * processes never fight over one folder.
 *
 * @param base the folder that holds links folders, such as `~/.cache/magi/links`
 * @param systemPath the PATH without magi's own links folder
 * @returns the links folder's absolute path
 */
export async function prepareLinks(
  base: string,
  entries: readonly LinkEntry[],
  systemPath: string,
): Promise<string> {
  // Which names the system PATH holds changes only when one of its folders changes: a warm
  // start finds the answer under a key of the entries and each folder's modification time,
  // instead of listing every PATH folder again.
  const known = join(
    base,
    `.known-${await digest(JSON.stringify(entries) + pathStamp(systemPath))}`,
  );
  try {
    const dir = Deno.readLinkSync(known);
    if (Deno.statSync(dir).isDirectory) return dir;
  } catch {
    // Not known yet, or its folder is gone.
  }
  const dir = await makeLinks(base, entries, systemPath);
  try {
    Deno.symlinkSync(dir, known);
  } catch {
    // Another process recorded it first, or the folder cannot be written: only a cache.
  }
  return dir;
}

/** Each PATH folder with its modification time and inode: changes when a name comes or goes. */
function pathStamp(path: string): string {
  return path.split(":").map((dir) => {
    try {
      const info = Deno.statSync(dir);
      return `\n${dir} ${info.mtime?.getTime()} ${info.ino}`;
    } catch {
      return `\n${dir} -`;
    }
  }).join("");
}

async function makeLinks(
  base: string,
  entries: readonly LinkEntry[],
  systemPath: string,
): Promise<string> {
  const listed = namesOnPath(systemPath);
  const kept = entries.filter((e) => !listed.has(e.name) || !onPath(e.name, systemPath));
  const dir = join(base, await digest(JSON.stringify(kept)));
  try {
    if (Deno.statSync(dir).isDirectory) return dir;
  } catch {
    // Not made yet.
  }
  await privateDirAsync(base);
  const tmp = await Deno.makeTempDir({ dir: base, prefix: ".new-" });
  for (const entry of kept) {
    const path = join(tmp, entry.name);
    if ("target" in entry) await Deno.symlink(entry.target, path);
    else await Deno.writeTextFile(path, entry.script, { mode: 0o700 });
  }
  try {
    await Deno.rename(tmp, dir);
  } catch {
    // Another process made the same folder first: theirs is identical.
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return dir;
}
