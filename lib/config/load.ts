/**
 * Loading the config (SPEC S10.1): JSONC files merged in order — the user's
 * (`$XDG_CONFIG_HOME/magi/config.jsonc`), the project's (`.magi/config.jsonc` in the working
 * directory or the nearest folder above it), then an explicit file (`MAGI_CONFIG`, replaced
 * by `--config FILE`) — each value remembering the file it came from. The result is built once,
 * typed by the key table (lib/config/keys.ts) and frozen: flags that change a value, such as
 * `--tools-dir`, go in when it is built.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import type * as Jsonc from "jsonc-parser";
import type { ParseError } from "jsonc-parser";
import { lazyRequire } from "../core/lazy_require.ts";
import { argumentsProblem, isValid } from "../core/json_schema.ts";
import {
  GROUPS,
  KEYS,
  PROJECT_NEVER,
  PROJECT_TRUSTED_ONLY,
  type Settings,
  TABLE,
  type Values,
} from "./keys.ts";
import { deepFreeze } from "./freeze.ts";
import { legacySandboxNote } from "./sandbox_settings.ts";
import { userConfigFile } from "../core/xdg.ts";
import { ConfigError } from "../core/errors.ts";

/** The JSONC parser, loaded when a config file exists rather than at every start. */
const jsonc = lazyRequire<typeof Jsonc>("jsonc-parser");

/** A config file or value that cannot be used (defined in lib/core, below the policy). */
export { ConfigError } from "../core/errors.ts";

export type { KeyName, Settings, Values } from "./keys.ts";

/**
 * The effective config, built once by {@link loadConfig} and frozen deeply: a write to any
 * part of it throws a TypeError (magi's modules are strict). A different config is a new
 * `loadConfig()`, never a change to this one.
 */
export interface Config {
  /** Dotted key → value, typed by the key table, with defaults filled in; every key is present. */
  readonly values: Settings;
  /** Dotted key → the file it came from, or "default", or a flag such as "--tools-dir". */
  readonly origins: Readonly<Record<string, string>>;
  /** The files read, in merge order. */
  readonly files: readonly string[];
  /** The explicit file (`--config` or `MAGI_CONFIG`), if any: given to tools as MAGI_CONFIG. */
  readonly explicit?: string;
  /** Lines for stderr about files passed over, such as another user's project config. */
  readonly notes: readonly string[];
}

/** Where to look. */
export interface ConfigSources {
  cwd: string;
  env: Record<string, string>;
  /** `--config FILE`. */
  configFlag?: string;
  /**
   * `--tools-dir DIR`, in order (relative to `cwd`): they come before the config's `tools_dir`
   * (a folder named twice, by real path, counts once), with origin "--tools-dir, then …".
   */
  toolsDirs?: readonly string[];
}

function projectConfigPath(cwd: string, skip: string | undefined): string | undefined {
  for (let dir = resolve(cwd);; dir = dirname(dir)) {
    const candidate = join(dir, ".magi", "config.jsonc");
    if (candidate !== skip && exists(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Whether `path` is `/dev/null` mounted over a file, as the sandbox hides magi's own files. */
function hiddenBySandbox(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isCharDevice === true && st.rdev === Deno.statSync("/dev/null").rdev &&
      path !== "/dev/null";
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Reads, checks and merges the config files.
 *
 * @returns the config, frozen deeply; `values` has every key of the table (undefined where a
 *   key without a default is not set)
 * @throws ConfigError for a file that cannot be read or parsed, an unknown key or a bad value
 *   (one line naming the file and the key)
 */
export function loadConfig(sources: ConfigSources): Config {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const [key, spec] of Object.entries(TABLE)) {
    values[key] = spec.default;
    if (spec.default !== undefined) origins[key] = "default";
  }
  const user = userConfigFile(sources.env);
  const explicitRaw = sources.configFlag ?? sources.env.MAGI_CONFIG;
  let explicit = explicitRaw ? resolve(sources.cwd, explicitRaw) : undefined;
  const files: string[] = [];
  if (user && exists(user) && user !== explicit) files.push(user);
  const notes: string[] = [];
  const project = projectConfigPath(sources.cwd, user);
  if (project && project !== explicit) {
    const owner = Deno.statSync(project).uid;
    const me = currentUid();
    if (owner === me || owner === 0 || me === null) files.push(project);
    else notes.push(`config ${project} ignored: it belongs to another user (uid ${owner})`);
  }
  // A magi a tool starts inside magi's sandbox finds MAGI_CONFIG hidden (`/dev/null` mounted
  // over it, as over the user's config): it runs without that file, as without the user's.
  if (explicit && !sources.configFlag && hiddenBySandbox(explicit)) explicit = undefined;
  if (explicit) {
    if (!exists(explicit)) {
      const how = sources.configFlag ? "--config" : "MAGI_CONFIG";
      throw new ConfigError(`config ${explicit} (from ${how}): no such file`);
    }
    files.push(explicit);
  }
  const read = new Map(files.map((file) => [file, readConfigFile(file)]));
  // The person's own files (the user's, and --config or MAGI_CONFIG) say which projects are
  // trusted, whichever order the files merge in; a project cannot trust itself.
  const trustedList = files.filter((f) => f !== project)
    .flatMap((f) => stringList(read.get(f)!.trusted_projects));
  for (const file of files) {
    const fromFile: Record<string, unknown> = read.get(file)!;
    if (file === project) {
      for (const key of PROJECT_NEVER.filter((k) => k in fromFile)) {
        delete fromFile[key];
        notes.push(
          `config ${file}: ignored "${key}": a project's config cannot unmask your secrets`,
        );
      }
    }
    if (file === project && !trusted(trustedList, dirname(dirname(project)))) {
      const dropped = Object.keys(fromFile).filter((k) => PROJECT_TRUSTED_ONLY.includes(k));
      for (const key of dropped) delete fromFile[key];
      if (dropped.length > 0) {
        notes.push(
          `config ${file}: ignored ${
            dropped.map((k) => `"${k}"`).join(", ")
          }: a project's config ` +
            `may set these (programs, servers, roots, what you are shown) only when your own ` +
            `config lists the project in "trusted_projects"`,
        );
      }
    }
    for (const [key, value] of Object.entries(fromFile)) {
      const spec = TABLE[key];
      if (file === project && spec.tighten) {
        const kept = spec.tighten(values[key], value);
        // (`policy` has its own warnings, from policySources.)
        if (key !== "policy" && JSON.stringify(kept) !== JSON.stringify(value)) {
          notes.push(
            `config ${file}: a project's config may only tighten "${key}"; kept ${
              JSON.stringify(kept)
            }`,
          );
        }
        if (kept !== values[key]) {
          values[key] = kept;
          origins[key] = file;
        }
      } else if (spec.union && origins[key] !== "default") {
        values[key] = [...new Set([...stringList(values[key]), ...stringList(value)])];
        origins[key] = `${origins[key]} + ${file}`;
      } else {
        values[key] = value;
        origins[key] = file;
      }
    }
  }
  const flagDirs = (sources.toolsDirs ?? []).map((d) => resolve(sources.cwd, d));
  if (flagDirs.length > 0) {
    const seen = new Set<string>();
    values.tools_dir = [...flagDirs, ...stringList(values.tools_dir)].filter((dir) => {
      const real = realPath(dir);
      return seen.has(real) ? false : (seen.add(real), true);
    });
    origins.tools_dir = `--tools-dir, then ${origins.tools_dir}`;
  }
  const legacy = legacySandboxNote(values, origins.policy);
  if (legacy) notes.push(legacy);
  return deepFreeze({ values: values as Settings, origins, files, explicit, notes });
}

function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/**
 * Reads one config file into dotted key → value, checking every key and value.
 *
 * @throws ConfigError naming the file (with line and column for a parse error) and the key
 */
export function readConfigFile(file: string): Partial<Values> {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (error) {
    throw new ConfigError(`config ${file}: cannot read it: ${(error as Error).message}`);
  }
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const { data, errors, printParseErrorCode } = parseJsonc(text);
  if (errors.length > 0) {
    const { error, offset } = errors[0];
    const before = text.slice(0, offset).split("\n");
    const where = `${before.length}:${before[before.length - 1].length + 1}`;
    throw new ConfigError(
      `config ${file}:${where}: not valid JSONC (${printParseErrorCode(error)})`,
    );
  }
  if (data === undefined) return {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ConfigError(`config ${file}: expected a JSON object at the top`);
  }
  const out: Record<string, unknown> = {};
  const visit = (obj: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(obj)) {
      const dotted = prefix + key;
      if (!prefix && (GROUPS as readonly string[]).includes(key)) {
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          throw new ConfigError(`config ${file}: key "${key}": expected an object`);
        }
        visit(value as Record<string, unknown>, key + ".");
        continue;
      }
      const spec = TABLE[dotted];
      if (!spec) {
        const known = Object.keys(KEYS).filter((k) => k.startsWith(prefix)).join(", ");
        throw new ConfigError(`config ${file}: unknown key "${dotted}" (known keys: ${known})`);
      }
      if (!isValid(spec.schema, value)) {
        // Which part is wrong, for values with parts (never for secrets: it may quote one).
        const problem =
          typeof value === "object" && value !== null && !dotted.startsWith("secrets.")
            ? argumentsProblem(spec.schema, value)
            : null;
        const what = problem
          ? `${problem} (expected ${spec.expected})`
          : `expected ${spec.expected}, got ${shown(dotted, value)}`;
        throw new ConfigError(`config ${file}: key "${dotted}": ${what}`);
      }
      out[dotted] = spec.paths ? resolvePaths(value, dirname(file)) : value;
    }
  };
  visit(data as Record<string, unknown>, "");
  // Each value was checked against its key's JSON Schema above: it has the key's type.
  return out as Partial<Values>;
}

/**
 * Parses a config file's text. Plain JSON (most files) is parsed by `JSON.parse`, which costs
 * nothing to load; anything else — comments, trailing commas, an error to locate — goes to
 * jsonc-parser.
 */
function parseJsonc(text: string): {
  data: unknown;
  errors: ParseError[];
  printParseErrorCode: (code: number) => string;
} {
  try {
    return { data: JSON.parse(text), errors: [], printParseErrorCode: String };
  } catch {
    // Not plain JSON (a comment, a trailing comma, an error): jsonc-parser reads it, or says where.
  }
  const errors: ParseError[] = [];
  const { parse, printParseErrorCode } = jsonc();
  const data = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  return { data, errors, printParseErrorCode: printParseErrorCode as (code: number) => string };
}

/** Whether a project folder is listed (by real path) in `trusted_projects`. */
function trusted(list: unknown, folder: string): boolean {
  if (!Array.isArray(list)) return false;
  const real = (p: string) => {
    try {
      return Deno.realPathSync(p);
    } catch {
      return p;
    }
  };
  const target = real(folder);
  return list.some((p) => typeof p === "string" && real(p) === target);
}

/** A bad value as an error message shows it: never the value of a `secrets.*` key. */
function shown(key: string, value: unknown): string {
  if (!key.startsWith("secrets.")) return JSON.stringify(value);
  return Array.isArray(value) ? "a list" : value === null ? "null" : `a ${typeof value}`;
}

function resolvePaths(value: unknown, base: string): unknown {
  if (typeof value === "string") return resolve(base, expandHome(value));
  if (Array.isArray(value)) return value.map((v) => resolvePaths(v, base));
  return value;
}

function expandHome(path: string): string {
  const home = Deno.env.get("HOME");
  return home && (path === "~" || path.startsWith("~/")) ? home + path.slice(1) : path;
}

/** A config value as a list of strings (a string alone becomes a list of one). */
export function stringList(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * This process's user id without `--allow-sys` (magi's permission set has none): the owner of
 * `/proc/self`, else `Deno.uid()` where sys is allowed; null when neither can tell.
 */
function currentUid(): number | null {
  try {
    return Deno.statSync("/proc/self").uid;
  } catch {
    try {
      return Deno.uid();
    } catch {
      return null;
    }
  }
}
