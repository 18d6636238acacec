/**
 * Whether a file a repository brought stays inside the folder it was found in once its
 * symlinks are followed: a checkout's `AGENTS.md`, `SKILL.md` or profile that is a link to
 * `~/.ssh/id_rsa` must not carry that file into the prompt.
 *
 * @module
 */
import { relative } from "node:path";

/**
 * The real path of `path` when it lies inside the real path of `folder`, else undefined (also
 * when either does not exist).
 */
export function containedPath(path: string, folder: string): string | undefined {
  let real: string;
  let root: string;
  try {
    root = Deno.realPathSync(folder);
    real = Deno.realPathSync(path);
  } catch {
    return undefined;
  }
  const rel = relative(root, real);
  return rel === "" || rel === ".." || rel.startsWith("../") || rel.startsWith("/")
    ? undefined
    : real;
}
