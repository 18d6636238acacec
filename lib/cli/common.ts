/**
 * What every command shares: option parsing with `node:util` `parseArgs`, the common options
 * (`--config FILE`, `--tools-dir DIR`…), building the runtime, and output helpers.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError } from "../config/load.ts";
import type { Secret } from "../pipeline/mask.ts";
import { stderr, stdout } from "../pipeline/out.ts";
import { createRuntime, type Runtime } from "../runtime/runtime.ts";
import { saveCheckCache, useCheckCache } from "../core/json_schema.ts";
import { stampCachePath } from "../core/stamp_cache.ts";

/** A command line that cannot be understood: exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Exit statuses: success, the tool's result is an error, usage or config error. */
export const EXIT = { ok: 0, toolError: 1, usage: 2 } as const;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  config: { type: "string" },
  "tools-dir": { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** Parses a command's arguments; unknown options are a {@link UsageError}. */
export function parseCommand<O extends ParseArgsConfig["options"]>(args: string[], options: O) {
  try {
    // Only parseArgs's own fields: the tables in options.ts carry help text too.
    const plain = Object.fromEntries(
      Object.entries({ ...COMMON_OPTIONS, version: { type: "boolean", short: "V" }, ...options })
        .map(([name, o]) => {
          const { type, multiple, short } = o as {
            type: string;
            multiple?: boolean;
            short?: string;
          };
          return [name, { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) }];
        }),
    ) as O & typeof COMMON_OPTIONS;
    return parseArgs({
      args,
      options: plain,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(inMagisVoice((error as Error).message));
  }
}

/**
 * {@link parseCommand} for a command that takes options only (`magi tools`).
 *
 * @throws UsageError naming the first word given
 */
export function parseOptionsOnly<O extends ParseArgsConfig["options"]>(
  command: string,
  args: string[],
  options: O,
) {
  const { values, positionals } = parseCommand(args, options);
  if (positionals.length > 0) {
    throw new UsageError(`magi ${command} takes no words; got "${positionals[0]}"`);
  }
  return values;
}

/** Node's parseArgs messages, said as magi says things. */
function inMagisVoice(message: string): string {
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown option "${unknown[1]}"; --help lists the options`;
  const missing = /Option '(?:-\w, )?([^' ]+)[^']*' argument missing/.exec(message);
  if (missing) return `option "${missing[1]}" needs a value`;
  const noValue = /Option '(?:-\w, )?([^' ]+)' does not take an argument/.exec(message);
  if (noValue) return `option "${noValue[1]}" takes no value`;
  return message;
}

/**
 * Writes a line to stderr, prefixed with `magi: ` — masked, and terminal-safe on a
 * terminal (`lib/pipeline/out.ts`).
 */
export function warn(message: string): void {
  try {
    stderr.text(`magi: ${message}\n`);
  } catch {
    // stderr cannot be written: nothing left to tell.
  }
}

/**
 * Writes text to stdout, all of it — masked, and terminal-safe on a terminal; a reader that
 * went away (`| head`) is not an error.
 */
export function write(text: string): Promise<void> {
  stdout.text(text);
  return Promise.resolve();
}

/**
 * Writes one JSON value and a line feed to stdout — masked; on a terminal its DEL and C1
 * characters are written as `\u` escapes, so what a reader parses is unchanged.
 */
export function writeJson(value: unknown, space?: number): Promise<void> {
  stdout.json(value, space);
  return Promise.resolve();
}

/** Builds the runtime from the common options. */
export async function runtimeFor(
  values: { config?: string; "tools-dir"?: string[]; sandbox?: string; auto?: boolean },
  opts: { calls?: boolean; secrets?: readonly Secret[] } = {},
): Promise<Runtime> {
  const env = Deno.env.toObject();
  useCheckCache(stampCachePath(env, "schema-checks"));
  const rt = await createRuntime({
    cwd: Deno.cwd(),
    env,
    configFlag: values.config,
    toolsDirs: values["tools-dir"],
    sandboxFlag: values.sandbox,
    probeSandbox: opts.calls === true,
    auto: values.auto,
    warn,
    secrets: opts.secrets,
  });
  saveCheckCache();
  for (const note of rt.config.notes) warn(note);
  if (opts.calls) {
    // A command that makes calls says once why a model's commands are asked about.
    if (rt.door.problem && !announced) {
      announced = true;
      warn(
        `no sandbox: ${rt.door.problem}; commands a model runs are asked about ` +
          "(--sandbox off runs them unsandboxed)",
      );
    }
    rt.door.tell = (line) => warn(rt.masker.maskText(line).replace(/^magi: /, ""));
  }
  return rt;
}

let announced = false;

/** The options of commands that make calls: `--sandbox MODE`. */
export const SANDBOX_OPTION = { sandbox: { type: "string" } } as const;

/** Whether an error is one the command line reports as a usage or config error (exit 2). */
export function isUsageError(error: unknown): error is Error {
  return error instanceof UsageError || error instanceof ConfigError;
}
