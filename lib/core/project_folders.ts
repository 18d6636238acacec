/**
 * The folders a checkout's files (context files, skills, sub-agent profiles) are looked for
 * in: from the working folder up to the git root (the nearest folder above holding `.git`,
 * a folder or a worktree's file), nearest first; without a git root, the working folder
 * alone — a folder above an unversioned working folder (a shared `/tmp`) is nobody's checkout.
 *
 * @example
 * ```ts
 * import { projectFolders } from "./project_folders.ts";
 * projectFolders(Deno.cwd()); // ["/repo/src/app", "/repo/src", "/repo"] inside /repo
 * ```
 *
 * @module
 */
import { dirname, join } from "node:path";

/** `cwd` and the folders above it up to the git root, nearest first; `[cwd]` without one. */
export function projectFolders(cwd: string): string[] {
  const folders: string[] = [];
  for (let dir = cwd;; dir = dirname(dir)) {
    folders.push(dir);
    try {
      Deno.lstatSync(join(dir, ".git"));
      return folders;
    } catch {
      // not the git root
    }
    if (dirname(dir) === dir) return [cwd];
  }
}
