/**
 * Skills in the Agent Skills open standard (agentskills.io): a folder holding `SKILL.md`, whose
 * YAML front matter gives `name` (lowercase letters, digits and single hyphens, at most 64
 * characters, the folder's name) and `description` (at most 1024 characters), and whose body
 * is the instructions; beside it may lie `scripts/`, `references/` and `assets/`.
 *
 * Found in the person's `$XDG_CONFIG_HOME/magi/skills/`, then in each folder from the working
 * folder up to the git root (nearest first): `.magi/skills/`, `.agents/skills/`,
 * `.claude/skills/` (read for compatibility). The first skill of a name wins; a later one is
 * left out with one line. A skill from a project folder came with the repository: its scripts
 * are asked about like a project's tools.
 *
 * @module
 */
import { join } from "node:path";
import { type LookedFolder, lookedFolders } from "../../core/user_dir.ts";
import type { Warn } from "../../core/types.ts";
import { containedPath } from "./contained.ts";
import { parseFrontMatter } from "./front_matter.ts";

/** One skill. */
export interface Skill {
  name: string;
  description: string;
  /** The skill's folder (absolute). */
  dir: string;
  /** Its `SKILL.md` (absolute). */
  file: string;
  /** Found in a project folder (came with the repository), not the person's own. */
  project: boolean;
  /**
   * The folder as found: its real path and identity. Every later read checks the folder is
   * still this one (a sandboxed program can swap a checkout's skill folder for a link).
   */
  anchor?: { real: string; dev: number; ino: number | null };
}

/**
 * The skill's folder as it was found, or undefined when it has been swapped since (for a
 * link, or another folder): reads are fenced by the recorded real path, never a new one.
 */
export function skillRoot(skill: Skill): string | undefined {
  const anchor = skill.anchor;
  if (!anchor) return skill.dir;
  try {
    if (Deno.realPathSync(skill.dir) !== anchor.real) return undefined;
    const now = Deno.statSync(anchor.real);
    return now.isDirectory && now.dev === anchor.dev && now.ino === anchor.ino
      ? anchor.real
      : undefined;
  } catch {
    return undefined;
  }
}

/** Where skill folders are looked for, in order. */
export const PROJECT_SKILL_DIRS = [".magi/skills", ".agents/skills", ".claude/skills"];

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The folders that may hold skills for `cwd`, in order, each with whether it is a project's. */
export function skillRoots(cwd: string, env: Record<string, string>): LookedFolder[] {
  const roots = lookedFolders(cwd, env, "skills", PROJECT_SKILL_DIRS);
  // The person's own folder may lie inside the checkout: it stays theirs.
  const seen = new Set<string>();
  return roots.filter((r) => seen.has(r.dir) ? false : (seen.add(r.dir), true));
}

/**
 * Reads one `SKILL.md`.
 *
 * @throws SyntaxError naming what is wrong (no front matter, bad YAML, a missing or bad field)
 */
export function readSkill(dir: string, project: boolean): Skill {
  const file = join(dir, "SKILL.md");
  if (project && !containedPath(file, dir)) {
    throw new SyntaxError("it is a link that leads out of the skill's folder");
  }
  const { data } = parseFrontMatter(Deno.readTextFileSync(file));
  const { name, description } = data;
  if (typeof name !== "string" || !NAME.test(name) || name.length > 64) {
    throw new SyntaxError(
      '"name" must be lowercase letters, digits and single hyphens, at most 64 characters',
    );
  }
  const folder = dir.split("/").at(-1);
  if (name !== folder) {
    throw new SyntaxError(`"name" is "${name}" but the folder is "${folder}" (they must match)`);
  }
  if (typeof description !== "string" || description.trim() === "") {
    throw new SyntaxError('"description" must be a non-empty string');
  }
  if (description.length > 1024) {
    throw new SyntaxError('"description" is longer than 1024 characters');
  }
  const real = Deno.realPathSync(dir);
  const info = Deno.statSync(real);
  return {
    name,
    description: description.trim(),
    dir,
    file,
    project,
    anchor: { real, dev: info.dev, ino: info.ino },
  };
}

/** Finds every skill for `cwd`, sorted by name; a bad one costs only itself, with one line. */
export function discoverSkills(cwd: string, env: Record<string, string>, warn: Warn): Skill[] {
  const found = new Map<string, Skill>();
  for (const root of skillRoots(cwd, env)) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(root.dir)];
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const dir = join(root.dir, entry.name);
      try {
        if (!Deno.statSync(dir).isDirectory) continue;
        Deno.statSync(join(dir, "SKILL.md"));
      } catch {
        continue;
      }
      let skill: Skill;
      try {
        skill = readSkill(dir, root.project);
      } catch (error) {
        warn(`skill ${join(dir, "SKILL.md")}: ${(error as Error).message}; skipped`);
        continue;
      }
      const holder = found.get(skill.name);
      if (holder) {
        warn(`skill "${skill.name}" in ${dir} left out: ${holder.dir} has that name`);
        continue;
      }
      found.set(skill.name, skill);
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** A skill's body: its `SKILL.md` after the front matter. */
export function skillBody(skill: Skill): string {
  const root = skillRoot(skill);
  const file = root && containedPath(join(root, "SKILL.md"), root);
  if (!file) throw new Error(`the folder of skill "${skill.name}" changed since it was found`);
  return parseFrontMatter(Deno.readTextFileSync(file)).body;
}

/** The most files {@link skillFiles} lists. */
export const MAX_LISTED_FILES = 200;

/** The files of a skill's folder (relative paths, sorted), at most {@link MAX_LISTED_FILES}. */
export function skillFiles(skill: Skill): { files: string[]; more: boolean } {
  const files: string[] = [];
  const root = skillRoot(skill);
  if (!root) return { files, more: false };
  let more = false;
  const visit = (rel: string, depth: number) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(join(root, rel))];
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory && depth < 6) visit(path, depth + 1);
      else if (e.isFile || e.isSymlink) {
        if (files.length >= MAX_LISTED_FILES) more = true;
        else files.push(path);
      }
    }
  };
  visit("", 0);
  return { files, more };
}
