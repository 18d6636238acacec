/**
 * `magi config`: the effective config, each value with where it came from.
 *
 * @module
 */
import { parseCommand, runtimeFor, write } from "./common.ts";

/** Runs `magi config`. */
export async function configCommand(args: string[]): Promise<number> {
  const { values } = parseCommand(args, { json: { type: "boolean" } });
  const rt = await runtimeFor(values);
  const { config } = rt;
  const keys = Object.keys(config.values).sort();
  if (values.json) {
    const out = Object.fromEntries(
      keys.map((k) => [k, { value: config.values[k], from: config.origins[k] }]),
    );
    await write(rt.masker.maskText(JSON.stringify(out, null, 2)) + "\n");
    return 0;
  }
  const lines = keys.map((k) =>
    `${k} = ${JSON.stringify(config.values[k])}    # ${config.origins[k]}`
  );
  const files = config.files.length ? config.files.join(", ") : "none (defaults only)";
  // Printed through the masker: `secrets.values` shows as "$SECRET", never as the values.
  await write(rt.masker.maskText(`# files read: ${files}\n${lines.join("\n")}\n`));
  return 0;
}
