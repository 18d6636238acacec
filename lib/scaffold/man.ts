/**
 * Reading a program's manual page for `magi new`: `man -P cat PAGE` as plain text, cut into
 * its sections, and the parts that matter here: the NAME line (a description when the help
 * gives none), the SYNOPSIS, the option entries and the EXAMPLES.
 *
 * @module
 */

/** A manual page as text, cut into sections. */
export interface ManPage {
  /** The page read: `find`, `git-commit`. */
  page: string;
  /** The NAME line's description: `search for files in a directory hierarchy`. */
  name?: string;
  /** The SYNOPSIS lines, as printed. */
  synopsis: string[];
  /** Lines of the sections that may hold option entries, normalised (see {@link optionText}). */
  options: string[];
  /** Lines of the EXAMPLES section(s). */
  examples: string[];
}

/** Drops bold and underline as a terminal prints them: a character, then a backspace. */
function dropOverstrike(text: string): string {
  if (!text.includes("\b")) return text;
  let out = "";
  for (const c of text) {
    if (c === "\b") out = out.slice(0, -1);
    else out += c;
  }
  return out;
}

/** Sections that never hold the program's own options. */
const NOT_OPTIONS =
  /^(NAME|SYNOPSIS|SEE ALSO|ENVIRONMENT.*|EXIT .*|RETURN VALUE|FILES|BUGS|NON-BUGS|AUTHORS?.*|COPYRIGHT|HISTORY|REPORTING BUGS|STANDARDS.*|EXAMPLES?|NOTES?|GIT|BUG REPORTS|DIAGNOSTICS|CONFORMING TO)$/;

/** The page name for a command line: `git commit` reads `git-commit`. */
export function manPageName(programName: string, sub: readonly string[]): string {
  const words = sub.filter((w) => !w.startsWith("-"));
  return [programName, ...words].join("-");
}

/**
 * Cuts a manual page printed as text into the parts `magi new` reads.
 *
 * @returns the page; never throws (a text that is no manual page gives empty parts)
 */
export function readManPage(page: string, text: string): ManPage {
  const lines = dropOverstrike(text.replace(/\r/g, "")).split("\n").map((l) =>
    l.replace(/\s+$/, "").replace(/\u2010/g, "-")
  );
  const out: ManPage = { page, synopsis: [], options: [], examples: [] };
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^[A-Z][A-Z0-9 ,/()-]*$/.test(line) && line.length < 60) {
      section = line.trim();
      continue;
    }
    if (i === 0 || (line.trim() !== "" && /^\S.*\(\d\w*\)$/.test(line))) continue; // header, footer
    if (section === "NAME") {
      const m = /\s(?:-|\u2014|\\-)\s+(.+)$/.exec(line.trim());
      if (m && out.name === undefined) out.name = m[1].trim();
      else if (out.name !== undefined && line.trim() !== "") out.name += " " + line.trim();
    } else if (section === "SYNOPSIS") out.synopsis.push(line);
    else if (/^EXAMPLES?$/.test(section)) out.examples.push(line);
    else if (!NOT_OPTIONS.test(section)) out.options.push(optionText(line));
  }
  return out;
}

/**
 * One line of an option section, as the option-list reader expects it: bullets dropped
 * (`○   --slurp/-s:` in jq's page), names joined by `/` written with commas, a final colon
 * after the names dropped.
 */
export function optionText(line: string): string {
  const bullet = /^(\s*)(?:[\u25cb\u00b7\u2022*o]|\u2022)\s+(-.*)$/.exec(line);
  let l = bullet ? bullet[1] + bullet[2] : line;
  const m = /^(\s*)(-\S.*?):?$/.exec(l);
  if (m && /^-[\w-]+(\s*\/\s*-[\w-]+)+(\s|:|$)/.test(m[2])) {
    l = m[1] + m[2].replace(/\s*\/\s*(?=-)/g, ", ");
  }
  if (/^\s*-\S.*[^:]:$/.test(l) && !/\s{2,}\S/.test(l.trim())) l = l.slice(0, -1);
  return l;
}

/**
 * The text the help parser reads for a manual page: its SYNOPSIS as a usage block, then its
 * option entries.
 */
export function manAsHelp(man: ManPage): string {
  const synopsis = man.synopsis.filter((l) => l.trim() !== "");
  return ["SYNOPSIS", ...synopsis, "", ...splitTags(joinEntries(man.options))].join("\n");
}

/** An entry whose text starts after a blank line (jq's page): the blank line dropped. */
function joinEntries(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const prev = out.at(-1);
    const next = lines[i + 1];
    if (
      lines[i].trim() === "" && prev !== undefined && prev.trimStart().startsWith("-") &&
      next !== undefined && indentOf(next) > indentOf(prev) && next.trim() !== ""
    ) continue;
    out.push(lines[i]);
  }
  return out;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * A man page sets a short tag and the start of its text on one line (`-empty File is empty`),
 * the text at the column its next lines start at: put a gap there, as help texts have.
 */
function splitTags(lines: string[]): string[] {
  return lines.map((line, i) => {
    const indent = line.length - line.trimStart().length;
    if (!line.trimStart().startsWith("-")) return line;
    const next = lines.slice(i + 1).find((l) => l.trim() !== "");
    if (next === undefined) return line;
    const column = next.length - next.trimStart().length;
    if (column <= indent + 1 || line.length <= column) return line;
    if (line[column - 1] !== " " || line[column] === " " || line[column - 2] === " ") return line;
    if (!/^\S+\s+\S+/.test(line.slice(column))) return line; // `-atime n`: a value, not a text
    return line.slice(0, column - 1) + "   " + line.slice(column);
  });
}
