/**
 * A tool call's `shown` sized for a terminal: its first `lines` lines (config
 * `display.lines`, default 20), then `… N more lines — full: PATH`. The whole is kept in a
 * file so `/last` in `magi chat` can page it.
 *
 * @module
 */

/** The default of config `display.lines`. */
export const DEFAULT_LINES = 20;

/** What is shown of `text`, and how many lines were left out. */
export function capLines(text: string, lines: number): { head: string; more: number } {
  const all = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  if (all.length <= lines) return { head: text.endsWith("\n") ? text : text + "\n", more: 0 };
  return { head: all.slice(0, lines).join("\n") + "\n", more: all.length - lines };
}

/** The line after a cut: `… 34 more lines — full: /path (/last pages it)`. */
export function moreLine(more: number, path: string | undefined): string {
  const where = path ? ` — full: ${path}` : "";
  return `… ${more} more line${more === 1 ? "" : "s"}${where} (/last shows it all)`;
}

/** Splits `text` into pages of `rows` lines. */
export function pages(text: string, rows: number): string[] {
  const lines = text.replace(/\n$/, "").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += rows) out.push(lines.slice(i, i + rows).join("\n") + "\n");
  return out;
}
