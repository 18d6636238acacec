/**
 * Skills served as MCP prompts by `magi mcp` (lib/skills/): each skill found for the working
 * folder is a prompt named as the skill (skill names have no `__`, so they never meet an
 * upstream server's `NAME__prompt`), described by its description, with one optional
 * argument `request`. Getting it gives one user message: the skill's `SKILL.md` body and the
 * list of its files, then the request — masked like everything `magi mcp` serves. Nothing
 * runs: a script of the skill runs only through the `skill` tool, past the door.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import type { GetPromptResult, Prompt } from "@modelcontextprotocol/sdk/types.js";
import type { Masker } from "../pipeline/mask.ts";
import { MAX_LISTED_FILES, type Skill, skillBody, skillFiles } from "../sources/skills/discover.ts";

/** The skills as MCP prompts, masked. */
export function skillPrompts(skills: readonly Skill[], masker: Masker): Prompt[] {
  return skills.map((skill) => ({
    name: skill.name,
    title: `Skill ${skill.name}`,
    description: masker.maskText(skill.description),
    arguments: [{
      name: "request",
      description: "What to do with the skill (added after its instructions)",
      required: false,
    }],
  }));
}

/**
 * Skill `name` as a prompt's messages, masked; undefined when there is no such skill.
 *
 * @throws Error when the skill's folder changed since it was found (it is not read)
 */
export function skillPrompt(
  skills: readonly Skill[],
  name: string,
  args: Record<string, string> | undefined,
  masker: Masker,
): GetPromptResult | undefined {
  const skill = skills.find((s) => s.name === name);
  if (!skill) return undefined;
  const body = skillBody(skill).trimEnd();
  const { files, more } = skillFiles(skill);
  const list = files.map((f) => `- ${f}`).join("\n") +
    (more ? `\n- … (only the first ${MAX_LISTED_FILES} are listed)` : "");
  const request = args?.request?.trim();
  const text = `# skill ${skill.name} (${skill.dir})\n\n${body}\n\n## files\n\n${list}\n` +
    (request ? `\n## request\n\n${request}\n` : "");
  return {
    description: masker.maskText(skill.description),
    messages: [{ role: "user", content: { type: "text", text: masker.maskText(text) } }],
  };
}
