/**
 * `magi tools [--json]`: the declarations the model sees — a table for people, or with
 * `--json` the array of `{name, description, parameters}` a provider receives.
 *
 * @module
 */
import { parseCommand, runtimeFor, UsageError, write, writeJson } from "./common.ts";
import { TOOLS_OPTIONS } from "./options.ts";

/** Runs `magi tools`. */
export async function toolsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, TOOLS_OPTIONS);
  if (positionals.length > 0) {
    throw new UsageError(`magi tools takes no words; got "${positionals[0]}"`);
  }
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
