/**
 * The tools_dir source (SPEC S4): every `<dir>/<name>/<name>` executable becomes a tool,
 * described by its own `--help` (or its script header) and typed by a `schema.json` beside
 * it when there is a usable one.
 *
 * @module
 */
import { join } from "node:path";
import { spawnCollecting } from "../exec/collect.ts";
import {
  type ArgvMapping,
  buildGenericInput,
  buildInput,
  genericParameters,
  readMapping,
} from "./argv.ts";
import { DiscoveryCache, type HelpVisit, stampOf } from "./discovery_cache.ts";
import { contractLines, describeHelp, headerLines, type HelpLines, needsStdin } from "./help.ts";
import { runProgramCall } from "./program_call.ts";
import { schemaProblem, stripExtensions } from "../core/json_schema.ts";
import type { Invocation, JsonSchema, Outcome, Tool, Warn } from "../core/types.ts";

/** Limits of one `--help` visit (SPEC S4.2). */
export const HELP_TIMEOUT_MS = 5000;
export const HELP_MAX_BYTES = 4000;

/** One discovered executable. */
export interface FoundTool {
  name: string;
  /** The executable's path as laid out: `<dir>/<name>/<name>`. */
  bin: string;
  folder: string;
  lines: HelpLines;
  /** The parsed typed interface, when schema.json is usable. */
  typed?: { schema: JsonSchema; mapping: ArgvMapping };
  /** `selftest.sh` beside the tool, if any. */
  selftest?: string;
}

/** What discovery needs. */
export interface DiscoverOptions {
  dirs: readonly string[];
  /** The environment `--help` runs with. */
  env: Record<string, string>;
  cache: DiscoveryCache;
  warn: Warn;
  /** Masks secrets in help text before it is kept or shown (descriptions reach the model). */
  mask?: (text: string) => string;
  /** Not said: a tool described by its header comments (the tools shipped with magi). */
  quietHeaders?: boolean;
}

/** At most this many `--help` visits run at once (a folder of hundreds must not exhaust file handles). */
const VISITS_AT_ONCE = 16;

/** Maps in parallel, at most `limit` at once, keeping the order of `items`. */
async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Visits every tool folder of every dir in parallel and returns the usable tools, in dir
 * order, then folder-name order. Each skipped tool costs one `warn` line.
 */
export async function discover(opts: DiscoverOptions): Promise<FoundTool[]> {
  const candidates: { name: string; folder: string }[] = [];
  for (const dir of opts.dirs) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      opts.warn(`tools_dir ${dir}: cannot read it (${(error as Error).name})`);
      continue;
    }
    const names = entries.filter((e) => (e.isDirectory || e.isSymlink) && !e.name.startsWith("."))
      .map((e) => e.name).sort();
    for (const name of names) candidates.push({ name, folder: join(dir, name) });
  }
  const found = await mapLimit(candidates, VISITS_AT_ONCE, (c) => visit(c.name, c.folder, opts));
  return found.filter((f): f is FoundTool => f !== undefined);
}

async function visit(
  name: string,
  folder: string,
  opts: DiscoverOptions,
): Promise<FoundTool | undefined> {
  let info: Deno.FileInfo;
  // One listing, which also says the folder is one, instead of a stat of it and a failed stat
  // per missing file: a thrown NotFound costs tens of microseconds, and most of hundreds of
  // tools have neither schema.json nor selftest.sh.
  const present = listing(folder);
  if (!present) return undefined;
  const bin = join(folder, name);
  try {
    info = Deno.statSync(bin);
  } catch {
    opts.warn(`tool "${name}" skipped: no executable ${bin}`);
    return undefined;
  }
  if (!info.isFile || ((info.mode ?? 0o111) & 0o111) === 0) {
    opts.warn(`tool "${name}" skipped: ${bin} is not an executable file`);
    return undefined;
  }
  const stamp = stampOf(info);
  let help = opts.cache.get(bin, stamp);
  const fresh = help === undefined;
  if (!help) {
    help = await readHelp(bin, folder, opts.env);
    const mask = opts.mask;
    if (mask && help.lines) {
      const { summary, usage } = help.lines;
      help.lines = usage === undefined
        ? { summary: mask(summary) }
        : { summary: mask(summary), usage: mask(usage) };
    }
    // A failure to start may pass (no file handles left): it is not remembered. A time-out
    // is (terminal, #18): a hanging --help would cost 5 s on every start; the tool is
    // visited again when its file changes.
    if (!help.transient) opts.cache.set(bin, stamp, help);
  }
  if (help.skip || !help.lines) {
    opts.warn(`tool "${name}" skipped: ${help.skip ?? "no help text"}`);
    return undefined;
  }
  if (help.fromHeader && fresh && !opts.quietHeaders) {
    opts.warn(
      `tool "${name}": --help gave no summary and usage line; using the script's header comments`,
    );
  }
  const tool: FoundTool = { name, bin, folder, lines: help.lines };
  const typed = present.has("schema.json") ? readSchema(name, folder, opts.warn) : undefined;
  if (typed) tool.typed = typed;
  const selftest = join(folder, "selftest.sh");
  try {
    if (present.has("selftest.sh") && Deno.statSync(selftest).isFile) tool.selftest = selftest;
  } catch {
    // No selftest: nothing for `magi check` to run.
  }
  return tool;
}

/**
 * The names in a tool's folder, or undefined when it is no folder (missing, a file, a
 * broken link). A folder that cannot be listed gives both optional files' names, so that
 * both are looked for anyway.
 */
function listing(folder: string): Set<string> | undefined {
  try {
    return new Set(Array.from(Deno.readDirSync(folder), (entry) => entry.name));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    try {
      if (!Deno.statSync(folder).isDirectory) return undefined;
    } catch {
      return undefined;
    }
    return new Set(["schema.json", "selftest.sh"]);
  }
}

/** Runs `<bin> --help` under the discovery limits and reads the contract's lines. */
async function readHelp(
  bin: string,
  folder: string,
  env: Record<string, string>,
): Promise<HelpVisit> {
  const spawned = await spawnCollecting({
    program: bin,
    args: ["--help"],
    cwd: folder,
    env,
    timeoutMs: HELP_TIMEOUT_MS,
    maxStdoutBytes: HELP_MAX_BYTES,
  });
  if (spawned.startError) return { skip: spawned.startError };
  if (spawned.timedOut) {
    return {
      skip: `--help did not finish within ${HELP_TIMEOUT_MS / 1000} s ` +
        "(remembered until the file changes)",
    };
  }
  if (spawned.signal && !spawned.capped) return { skip: `--help crashed (${spawned.signal})` };
  const decoder = new TextDecoder();
  let text = decoder.decode(spawned.stdout);
  if (text.trim() === "" && spawned.code === 0) {
    text = decoder.decode(spawned.stderrTail.subarray(0, HELP_MAX_BYTES));
  }
  const lines = contractLines(text);
  if (!lines?.usage) {
    // No usage line (or no text at all): a script's leading comments serve instead.
    const header = readHeader(bin);
    if (header) return { lines: header, fromHeader: true };
  }
  return lines ? { lines } : { skip: "--help printed no text (and no header comments)" };
}

function readHeader(bin: string): HelpLines | null {
  try {
    const file = Deno.openSync(bin);
    const buf = new Uint8Array(4096);
    const n = file.readSync(buf) ?? 0;
    file.close();
    return headerLines(new TextDecoder().decode(buf.subarray(0, n)));
  } catch {
    return null;
  }
}

/** Reads `schema.json`; any problem keeps the tool generic, with one warn line saying why. */
function readSchema(name: string, folder: string, warn: Warn): FoundTool["typed"] {
  const path = join(folder, "schema.json");
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    warn(
      `tool "${name}": ${path} is not JSON (${(error as Error).message}); the tool stays generic`,
    );
    return undefined;
  }
  const problem = schemaProblem(schema) ??
    (typeof (schema as JsonSchema).properties !== "object"
      ? 'the schema has no "properties"'
      : null);
  if (problem) {
    warn(`tool "${name}": ${path}: ${problem}; the tool stays generic`);
    return undefined;
  }
  const raw = schema as JsonSchema;
  if (raw["x-magi"] === undefined && raw["x-snens"] === undefined) {
    warn(
      `tool "${name}": ${path} has no x-magi mapping, so no field would reach the program; ` +
        "the tool stays generic",
    );
    return undefined;
  }
  const mapping = readMapping(raw);
  if (typeof mapping === "string") {
    warn(`tool "${name}": ${path}: ${mapping}; the tool stays generic`);
    return undefined;
  }
  return { schema: schema as JsonSchema, mapping };
}

/**
 * Makes a registry entry of a discovered tool. said is its stdout; a person-facing
 * rendering written to the file named by `$MAGI_SHOWN` becomes shown.
 *
 * @param source "tools_dir" for configured folders, "shipped" for the tools shipped with magi
 */
export function toolsDirTool(found: FoundTool, source: string): Tool {
  const parameters = found.typed
    ? stripExtensions(found.typed.schema)
    : genericParameters(needsStdin(found.lines));
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  return {
    declaration: { name: found.name, description: describeHelp(found.lines), parameters },
    origin: { source, where: found.folder },
    ownsCallFields: "cwd" in properties || "timeout_seconds" in properties,
    invoke: (call) => invokeProgram(found, call),
  };
}

function invokeProgram(found: FoundTool, call: Invocation): Promise<Outcome> {
  const input = found.typed
    ? buildInput(found.typed.mapping, call.args)
    : buildGenericInput(call.args);
  // It may ask on the approvals socket, and a Deno tool reaches the permission broker.
  return runProgramCall(found.bin, input, call, { ownSockets: true });
}
