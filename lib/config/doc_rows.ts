/**
 * The README's "Config keys" table, from the key table: one row per key with its default, who
 * besides the person may set it, and what it means (`deno run scripts/config_keys.ts` prints it;
 * tests/config/settings_test.ts checks the README against it).
 *
 * @module
 */
import { TABLE } from "./keys.ts";

/** The header of the table and its rule line. */
export const HEADER = ["key", "default", "a project may set it", "meaning"];

/** A key's cells: name, default, whether a project may set it, meaning. */
export function keyRow(name: string): string[] {
  const spec = TABLE[name];
  const project = spec.project === "never"
    ? "no"
    : spec.project === "trusted"
    ? "when trusted"
    : spec.tighten
    ? "only to tighten"
    : spec.union
    ? "adds to the list"
    : "yes";
  return [`\`${name}\``, spec.doc.default, project, spec.doc.meaning];
}

/** The whole table as Markdown lines (columns padded as `deno fmt` pads them). */
export function keyTable(): string[] {
  const rows = [HEADER, ...Object.keys(TABLE).map(keyRow)];
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(rows[0]), line(widths.map((w) => "-".repeat(w))), ...rows.slice(1).map(line)];
}
