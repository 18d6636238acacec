/**
 * The folders looked in for one kind of the person's files (skills, sub-agent profiles): their
 * own magi config folder (`magiDir(env, "config")`, core/xdg.ts), then the project folders.
 *
 * @module
 */
import { join } from "node:path";
import { projectFolders } from "./project_folders.ts";
import { magiDir } from "./xdg.ts";

/** A folder looked in, with whether it is a checkout's (`project`) or the person's own. */
export interface LookedFolder {
  dir: string;
  project: boolean;
}

/**
 * The folders that may hold one kind of file (skills, profiles) for `cwd`, in order: the
 * person's `<magiDir(env, "config")>/<own>`, then each of `inProject` in every project folder
 * (core/project_folders.ts), nearest first.
 *
 * @param inProject folders relative to a project folder: `[".magi/agents"]`
 */
export function lookedFolders(
  cwd: string,
  env: Record<string, string>,
  own: string,
  inProject: readonly string[],
): LookedFolder[] {
  const folders: LookedFolder[] = [];
  const home = magiDir(env, "config");
  if (home) folders.push({ dir: join(home, own), project: false });
  for (const dir of projectFolders(cwd)) {
    for (const sub of inProject) folders.push({ dir: join(dir, sub), project: true });
  }
  return folders;
}
