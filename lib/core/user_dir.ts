/**
 * The person's own magi folder, `$XDG_CONFIG_HOME/magi` (or `~/.config/magi`): where their
 * config, AGENTS.md, skills and sub-agent profiles live.
 *
 * @module
 */
import { join } from "node:path";
import { projectFolders } from "./project_folders.ts";

/** The person's magi config folder, or undefined when neither XDG_CONFIG_HOME nor HOME is set. */
export function userMagiDir(env: Record<string, string>): string | undefined {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, ".config") : undefined);
  return base ? join(base, "magi") : undefined;
}

/** A folder looked in, with whether it is a checkout's (`project`) or the person's own. */
export interface LookedFolder {
  dir: string;
  project: boolean;
}

/**
 * The folders that may hold one kind of file (skills, profiles) for `cwd`, in order: the
 * person's `<userMagiDir>/<own>`, then each of `inProject` in every project folder
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
  const home = userMagiDir(env);
  if (home) folders.push({ dir: join(home, own), project: false });
  for (const dir of projectFolders(cwd)) {
    for (const sub of inProject) folders.push({ dir: join(dir, sub), project: true });
  }
  return folders;
}
