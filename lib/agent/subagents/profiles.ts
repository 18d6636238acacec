/**
 * Sub-agent profiles, written as Claude Code writes its sub-agents: a Markdown file
 * `<name>.md` whose YAML front matter gives `name`, `description`, optionally `tools` (a list,
 * or names separated by commas; absent: every tool of the parent) and `model` (absent or
 * "inherit": the parent's), and whose body is the sub-agent's instructions. Found in the
 * person's `$XDG_CONFIG_HOME/magi/agents/`, then in `.magi/agents/` of each folder from the
 * working folder up to the git root; the first of a name wins.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { containedPath } from "../../sources/skills/contained.ts";
import { parseFrontMatter } from "../../sources/skills/front_matter.ts";
import { type LookedFolder, lookedFolders } from "../../core/user_dir.ts";

/** One profile. */
export interface Profile {
  name: string;
  description: string;
  /** The tools it may use; undefined: all of the parent's. */
  tools?: string[];
  /** The model; undefined: the parent's. */
  model?: string;
  /** Its instructions (the Markdown body). */
  prompt: string;
  file: string;
  project: boolean;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The folders that may hold profiles for `cwd`, in order. */
export function profileDirs(cwd: string, env: Record<string, string>): LookedFolder[] {
  return lookedFolders(cwd, env, "agents", [".magi/agents"]);
}

/**
 * Reads one profile file.
 *
 * @throws SyntaxError naming what is wrong with it
 */
export function readProfile(file: string, project: boolean): Profile {
  if (project && !containedPath(file, dirname(file))) {
    throw new SyntaxError("it is a link that leads out of its folder");
  }
  const { data, body } = parseFrontMatter(Deno.readTextFileSync(file));
  const { name, description, tools, model } = data;
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new SyntaxError('"name" must be letters, digits, "_" and "-", at most 64');
  }
  if (typeof description !== "string" || description.trim() === "") {
    throw new SyntaxError('"description" must be a non-empty string');
  }
  let list: string[] | undefined;
  if (typeof tools === "string") list = tools.split(",").map((t) => t.trim()).filter(Boolean);
  else if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) list = tools;
  else if (tools !== undefined && tools !== null) {
    throw new SyntaxError('"tools" must be a list of tool names or one string of names and commas');
  }
  if (model !== undefined && model !== null && typeof model !== "string") {
    throw new SyntaxError('"model" must be a string');
  }
  return {
    name,
    description: description.trim(),
    tools: list,
    model: typeof model === "string" && model !== "inherit" ? model : undefined,
    prompt: body.trim(),
    file,
    project,
  };
}

/**
 * Finds the profile called `name` for `cwd`.
 *
 * @throws Error when there is none, or its file is not a valid profile (the message says where)
 */
export function findProfile(name: string, cwd: string, env: Record<string, string>): Profile {
  const looked: string[] = [];
  for (const { dir, project } of profileDirs(cwd, env)) {
    const entries = profileFiles(dir);
    if (!entries) continue;
    looked.push(dir);
    for (const entry of entries) {
      const file = join(dir, entry);
      let profile: Profile;
      try {
        profile = readProfile(file, project);
      } catch (error) {
        if (entry === `${name}.md`) {
          throw new Error(`profile ${file}: ${(error as Error).message}`);
        }
        continue;
      }
      if (profile.name === name) return profile;
    }
  }
  throw new Error(
    `no sub-agent profile "${name}" (looked in ${
      looked.length ? looked.join(", ") : "~/.config/magi/agents and .magi/agents"
    })`,
  );
}

/** The `*.md` file names of a profiles folder, sorted; undefined when it cannot be read. */
function profileFiles(dir: string): string[] | undefined {
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".md")).map((e) => e.name)
      .sort();
  } catch {
    return undefined;
  }
}

/** Every profile for `cwd` (the first of each name), sorted by name; a bad file is one line. */
export function listProfiles(
  cwd: string,
  env: Record<string, string>,
  warn: (line: string) => void,
): Profile[] {
  const found = new Map<string, Profile>();
  for (const { dir, project } of profileDirs(cwd, env)) {
    const entries = profileFiles(dir);
    if (!entries) continue;
    for (const entry of entries) {
      try {
        const profile = readProfile(join(dir, entry), project);
        if (!found.has(profile.name)) found.set(profile.name, profile);
      } catch (error) {
        warn(`profile ${join(dir, entry)}: ${(error as Error).message}; skipped`);
      }
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}
