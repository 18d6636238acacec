/**
 * The `--help` contract (SPEC S4.3): the first non-empty line is a one-line summary, the
 * second a usage line; the rest is for people. And the fallback to a script's leading
 * comment lines when `--help` does not give both (S4.2).
 *
 * @module
 */

/** The two lines a tool's description is made of. */
export interface HelpLines {
  summary: string;
  /** Absent when the text gave a summary only. */
  usage?: string;
}

const MAX_LINE = 400;

function firstTwo(lines: string[]): HelpLines | null {
  const kept = lines.map((l) => l.trim()).filter((l) => l !== "").slice(0, 2)
    .map((l) => l.length > MAX_LINE ? l.slice(0, MAX_LINE) + "…" : l);
  if (kept.length === 0) return null;
  let [summary, usage] = kept;
  // Many programs print "Usage: …" first and the summary after it: keep the contract's order.
  if (usage !== undefined && /^usage:/i.test(summary) && !/^usage:/i.test(usage)) {
    [summary, usage] = [usage, summary];
  }
  return usage === undefined ? { summary } : { summary, usage };
}

/** Reads the contract's lines from a `--help` text; null when it has no text at all. */
export function contractLines(text: string): HelpLines | null {
  return firstTwo(text.split(/\r?\n/));
}

/** Comment markers a script's header may use: shell/Python/Ruby, JS/TS/Go, Lua/SQL. */
const COMMENT = /^\s*(#|\/\/|--)(?!!)\s?(.*)$/;

/**
 * Reads the contract's lines from a script's leading comment lines (after a `#!` line).
 *
 * @param head the first bytes of the file, decoded as text
 * @returns the lines, or null when the file is not a script or its header has fewer than two
 */
export function headerLines(head: string): HelpLines | null {
  const lines = head.split(/\r?\n/);
  if (!lines[0]?.startsWith("#!")) return null;
  const comments: string[] = [];
  for (const line of lines.slice(1)) {
    if (line.trim() === "") {
      if (comments.length > 0) break;
      continue;
    }
    const m = COMMENT.exec(line);
    if (!m) break;
    if (/^-\*-.*-\*-$|^(vim?|shellcheck):/.test(m[2].trim())) continue;
    comments.push(m[2]);
  }
  const found = firstTwo(comments);
  return found?.usage !== undefined ? found : null;
}

/** The description the model sees: the summary line and the usage line. */
export function describeHelp(lines: HelpLines): string {
  return lines.usage === undefined ? lines.summary : `${lines.summary}\n${lines.usage}`;
}

/** Whether the summary or usage says the tool needs stdin (the word `stdin`). */
export function needsStdin(lines: HelpLines): boolean {
  return /\bstdin\b/i.test(describeHelp(lines));
}
