/**
 * `magi config`: the effective config, each value with where it came from.
 *
 * @module
 */
import { CONFIG_OPTIONS } from "./options.ts";
import { type KeyName, loadConfig, readConfigFile } from "../config/load.ts";
import { loadPolicy, policySources, userConfigFile } from "../policy/decide.ts";
import { maskerFor } from "../runtime/runtime.ts";
import { parseOptionsOnly, warn, write } from "./common.ts";

/** Runs `magi config`. */
export async function configCommand(args: string[]): Promise<number> {
  const values = parseOptionsOnly("config", args, CONFIG_OPTIONS);
  // Only the config: no tool is visited and no MCP server started to print it.
  const env = Deno.env.toObject();
  const config = loadConfig({
    cwd: Deno.cwd(),
    env,
    configFlag: values.config,
    toolsDirs: values["tools-dir"],
  });
  for (const note of config.notes) warn(note);
  const masker = maskerFor(config, env, warn);
  // The policy is not one file's value: each of the person's own files adds its rules, and a
  // project's counts only where it tightens (its allow rules and disable are dropped here too).
  const own = (file: string) => file === config.explicit || file === userConfigFile(env);
  const policies = policySources(config.files, own, readConfigFile, warn);
  // Checked as every other command checks it: a rule that does not compile is an error here too.
  loadPolicy(policies, "default", [], env);
  // The keys set (by a file, a flag or a default); `policy` is shown per file below.
  const keys = (Object.keys(config.origins) as KeyName[]).filter((k) => k !== "policy").sort();
  if (values.json) {
    const out: Record<string, unknown> = Object.fromEntries(
      keys.map((k) => [k, { value: config.values[k], from: config.origins[k] }]),
    );
    out.policy = policies.map((p) => ({ value: p.config, from: p.origin }));
    await write(masker.maskText(JSON.stringify(out, null, 2)) + "\n");
    return 0;
  }
  const lines = keys.map((k) =>
    `${k} = ${JSON.stringify(config.values[k])}    # ${config.origins[k]}`
  );
  for (const p of policies) {
    const how = own(p.origin) ? "" : " (a project's: only what tightens)";
    lines.push(`policy = ${JSON.stringify(p.config)}    # ${p.origin}${how}`);
  }
  if (policies.length === 0) lines.push("policy = (the default rules only)    # default");
  const files = config.files.length ? config.files.join(", ") : "none (defaults only)";
  // Printed through the masker: `secrets.values` shows as "$SECRET", never as the values.
  await write(masker.maskText(`# files read: ${files}\n${lines.join("\n")}\n`));
  return 0;
}
