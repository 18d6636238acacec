/**
 * `magi tools [--json]`: the declarations the model sees — a table for people, or with
 * `--json` the array of `{name, description, parameters}` a provider receives.
 *
 * @module
 */
import { parseOptionsOnly, runtimeFor, write, writeJson } from "./common.ts";
import { TOOLS_OPTIONS } from "./options.ts";

/** Runs `magi tools`. */
export async function toolsCommand(args: string[]): Promise<number> {
  const values = parseOptionsOnly("tools", args, TOOLS_OPTIONS);
  const rt = await runtimeFor(values);
  if (values.json) {
    await writeJson(rt.registry.declarations(), 2);
    return 0;
  }
  const rows = rt.registry.list().map((t) => [
    t.declaration.name,
    t.origin.source,
    t.declaration.description.split("\n")[0],
  ]);
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i].length), 4));
  const lines = rows.map((r) => `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`);
  await write(lines.join("\n") + (lines.length ? "\n" : "(no tools)\n"));
  return 0;
}
