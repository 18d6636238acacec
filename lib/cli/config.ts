/**
 * `magi config`: the effective config, each value with where it came from.
 *
 * @module
 */
import { resolve } from "node:path";
import { loadConfig, stringList } from "../config/load.ts";
import { maskerFor } from "../runtime.ts";
import { parseCommand, UsageError, warn, write } from "./common.ts";

/** Runs `magi config`. */
export async function configCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { json: { type: "boolean" } });
  if (positionals.length > 0) {
    throw new UsageError(`magi config takes no words; got "${positionals[0]}"`);
  }
  // Only the config: no tool is visited and no MCP server started to print it.
  const env = Deno.env.toObject();
  const config = loadConfig({ cwd: Deno.cwd(), env, configFlag: values.config });
  for (const note of config.notes) warn(note);
  const flagDirs = (values["tools-dir"] ?? []).map((d) => resolve(d));
  if (flagDirs.length > 0) {
    config.values.tools_dir = [...flagDirs, ...stringList(config.values.tools_dir)];
    config.origins.tools_dir = `--tools-dir, then ${config.origins.tools_dir}`;
  }
  const masker = maskerFor(config, env, warn);
  const keys = Object.keys(config.values).sort();
  if (values.json) {
    const out = Object.fromEntries(
      keys.map((k) => [k, { value: config.values[k], from: config.origins[k] }]),
    );
    await write(masker.maskText(JSON.stringify(out, null, 2)) + "\n");
    return 0;
  }
  const lines = keys.map((k) =>
    `${k} = ${JSON.stringify(config.values[k])}    # ${config.origins[k]}`
  );
  const files = config.files.length ? config.files.join(", ") : "none (defaults only)";
  // Printed through the masker: `secrets.values` shows as "$SECRET", never as the values.
  await write(masker.maskText(`# files read: ${files}\n${lines.join("\n")}\n`));
  return 0;
}
