/**
 * YAML front matter, as Agent Skills' `SKILL.md` and sub-agent profiles write it: a first line
 * `---`, YAML, a line `---`, then the Markdown body. Parsed with the `yaml` library.
 *
 * @module
 */
import { parse } from "yaml";

/** A Markdown file's front matter (a YAML mapping) and its body. */
export interface FrontMatter {
  data: Record<string, unknown>;
  body: string;
}

/**
 * Splits and parses a file's front matter.
 *
 * @throws SyntaxError when there is no front matter, its YAML does not parse, or it is not a
 *   mapping (the message says which)
 */
export function parseFrontMatter(text: string): FrontMatter {
  const src = text.replace(/^\uFEFF/, "");
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(src);
  if (!match) throw new SyntaxError("no YAML front matter (a first line ---, then a closing ---)");
  let data: unknown;
  try {
    data = parse(match[1]);
  } catch (error) {
    const first = String((error as Error).message).split("\n")[0];
    throw new SyntaxError(`its front matter is not valid YAML: ${first}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new SyntaxError("its front matter is not a YAML mapping of keys");
  }
  return { data: data as Record<string, unknown>, body: src.slice(match[0].length) };
}
