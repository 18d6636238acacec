/**
 * `magi skills [--json]`: the skills found for the working folder — name, where, and the
 * description the model's catalogue carries; with `--json` an array of
 * `{name, description, dir, project}`.
 *
 * @module
 */
import { SKILLS_OPTIONS } from "./options.ts";
import { parseOptionsOnly, runtimeFor, write, writeJson } from "./common.ts";

/** Runs `magi skills`. */
export async function skillsCommand(args: string[]): Promise<number> {
  const values = parseOptionsOnly("skills", args, SKILLS_OPTIONS);
  const rt = await runtimeFor(values);
  if (values.json) {
    await writeJson(
      rt.skills.map((s) => ({
        name: s.name,
        description: s.description,
        dir: s.dir,
        project: s.project,
      })),
      2,
    );
    return 0;
  }
  if (rt.skills.length === 0) {
    await write(
      "(no skills: put a folder with SKILL.md in .magi/skills/ or ~/.config/magi/skills/)\n",
    );
    return 0;
  }
  const lines = rt.skills.map((s) =>
    `${s.name}  ${s.project ? "project" : "user"}  ${s.dir}\n  ${s.description}`
  );
  await write(lines.join("\n") + "\n");
  return 0;
}
