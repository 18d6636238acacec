/**
 * The Lua source (SPEC S3): `*.lua` declaration files, each calling
 * `magi.tool(name, {description, needs, run, transport, …})`, become registry entries reached
 * through one of four transports — `lua` (the body), `command` (a program given the call as
 * argv through the `x-magi` forms of `argv.ts`), `casper` (a peer) and `builtin`.
 *
 * What each file declares is cached by the file's stamp, so a warm start does not start the
 * engine at all; the engine starts, and loads a file again, when one of its bodies first runs.
 *
 * @module
 */
import { effectsOf, NONE } from "../../policy/effects.ts";
import { dirname, join, resolve } from "node:path";
import { type ArgvMapping, buildInput, readMapping } from "../argv.ts";
import { stampOf } from "../discovery_cache.ts";
import { DEFAULT_PEER, type Peer, peerTool } from "../peers.ts";
import { runProgramCall } from "../program_call.ts";
import { argumentsProblem, schemaProblem, stripExtensions } from "../../core/json_schema.ts";
import type { StampCache } from "../../core/stamp_cache.ts";
import type { Invocation, JsonSchema, Outcome, Tool, Warn } from "../../core/types.ts";
import {
  type LoadedFile,
  LuaHost,
  type RawDeclaration,
  type RunReply,
} from "../../exec/lua/engine.ts";
import { LOADING, type LuaConfinement, LuaWorkerHost } from "../../exec/lua/worker_host.ts";

/** How long a file's top-level code may run while it loads. */
export const LOAD_TIMEOUT_MS = 5000;
/** Bump when what the cache holds changes shape. */
export const LUA_CACHE_VERSION = "lua-2";

/** The transports a declaration may name. */
export const TRANSPORTS = ["lua", "command", "casper", "builtin"] as const;

/** What a file gave, as cached: its declarations (without engine handles) or its error. */
export type CachedFile = Omit<LoadedFile, "decls"> & {
  decls: Omit<RawDeclaration, "id">[];
  /** Schema checks already made: the schema's JSON text → the problem, or null. */
  checks?: Record<string, string | null>;
};

/** What loading the Lua source needs. */
export interface LuaSourceOptions {
  /** Folders of `*.lua` files, earliest first (an earlier file wins a name). */
  dirs: readonly string[];
  /** The builtins' registry entries, for `transport = "builtin"`. */
  builtins: readonly Tool[];
  /** Configured peers and the tools they listed, for `transport = "casper"`. */
  peers: readonly Peer[];
  peerTools: readonly Tool[];
  /** The Lua heap's cap in bytes. */
  memoryBytes: number;
  cache: StampCache<CachedFile>;
  /**
   * Declarations known without the engine (the shipped files' manifest), by absolute path:
   * used on a cold cache when the file's SHA-256 matches.
   */
  known?: ReadonlyMap<string, KnownFile>;
  /**
   * Runs the engine in a Worker under the policy's Deno permissions, judging each
   * `magi.exec`. Absent: the engine runs in magi's own thread, unconfined — only for build
   * scripts and tests that load declarations without a policy.
   */
  confine?: LuaConfinement;
  warn: Warn;
}

/** A file's declarations as recorded with the SHA-256 (hex) of its text. */
export interface KnownFile {
  sha256: string;
  file: CachedFile;
}

/** The SHA-256 of a text's UTF-8 bytes, in hex. */
export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What the Lua source gave. */
export interface LuaTools {
  tools: Tool[];
  /** Builtin and peer entries a declaration re-describes: leave them out of the registry. */
  replaced: Set<Tool>;
  /** Whether the engine was started (for measuring start-up). */
  engineStarted: boolean;
}

/** The `*.lua` files of the folders, folder by folder, names in byte order. */
export function luaFiles(dirs: readonly string[]): string[] {
  const files: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = [...Deno.readDirSync(dir)]
        .filter((e) => (e.isFile || e.isSymlink) && e.name.endsWith(".lua"))
        .map((e) => e.name).sort();
    } catch {
      continue;
    }
    for (const name of names) files.push(join(dir, name));
  }
  return files;
}

/** Where the bodies of one Lua source run: a Worker, or (unconfined) magi's own thread. */
interface LuaBackend {
  loadFile(path: string, text: string, timeoutMs: number): Promise<LoadedFile>;
  run(
    declId: number,
    args: Record<string, unknown>,
    call: Invocation,
    tool: string,
  ): Promise<RunReply>;
  end?(): void;
}

/** The engine of one Lua source, started on first need, and the files loaded into it. */
class LazyEngine {
  #backend: Promise<LuaBackend> | undefined;
  #loaded = new Map<string, Promise<Map<string, number>>>();

  constructor(
    private readonly memoryBytes: number,
    private readonly warn: Warn,
    private readonly confine: LuaConfinement | undefined,
  ) {}

  get started(): boolean {
    return this.#backend !== undefined;
  }

  backend(): Promise<LuaBackend> {
    if (this.#backend) return this.#backend;
    const print = (line: string) => this.warn(`lua: ${line}`);
    if (!this.confine) {
      return this.#backend = LuaHost.start({ memoryBytes: this.memoryBytes, print }).then((
        host,
      ) => ({
        loadFile: (path, text, timeoutMs) => Promise.resolve(host.loadFile(path, text, timeoutMs)),
        run: (declId, args, call) =>
          host.run(declId, args, {
            cwd: call.cwd,
            env: call.env,
            timeoutMs: call.timeoutMs,
            signal: call.signal,
          }),
      }));
    }
    const loaded = this.#loaded;
    const backend: Promise<LuaBackend> = Promise.resolve<LuaBackend>(
      new LuaWorkerHost({
        memoryBytes: this.memoryBytes,
        confine: this.confine,
        print,
        // An ended Worker took its loaded files with it: the next call starts afresh.
        onEnd: () => {
          if (this.#backend !== backend) return;
          this.#backend = undefined;
          loaded.clear();
        },
      }),
    );
    return this.#backend = backend;
  }

  /** Ends a Worker engine (the next need starts a new one). */
  async end(): Promise<void> {
    (await this.#backend)?.end?.();
  }

  /** Loads a file into the engine now, remembering its handles. */
  async load(path: string, text: string): Promise<LoadedFile> {
    const loaded = await (await this.backend()).loadFile(path, text, LOAD_TIMEOUT_MS);
    this.#loaded.set(path, Promise.resolve(handles(loaded)));
    return loaded;
  }

  /** The engine handle of a declaration, loading its file first when a warm start skipped it. */
  async handle(path: string, name: string): Promise<{ backend: LuaBackend; id: number }> {
    const backend = await this.backend();
    let ids = this.#loaded.get(path);
    if (!ids) {
      ids = (async () => {
        const loaded = await backend.loadFile(path, await read(path), LOAD_TIMEOUT_MS);
        if (loaded.error !== undefined) {
          throw new Error(`the file ${path} no longer loads: ${loaded.error}`);
        }
        return handles(loaded);
      })();
      this.#loaded.set(path, ids);
      // A failed load is not remembered: the next call tries again.
      ids.catch(() => {
        if (this.#loaded.get(path) === ids) this.#loaded.delete(path);
      });
    }
    const id = (await ids).get(name);
    if (id === undefined) throw new Error(`the file ${path} no longer declares "${name}"`);
    return { backend, id };
  }
}

function handles(loaded: LoadedFile): Map<string, number> {
  const ids = new Map<string, number>();
  for (const d of loaded.decls) {
    if (typeof d.name === "string" && d.id !== undefined && !ids.has(d.name)) ids.set(d.name, d.id);
  }
  return ids;
}

async function read(path: string): Promise<string> {
  return await Deno.readTextFile(path);
}

/**
 * Reads every declaration file and makes registry entries. A file that fails (syntax error,
 * error while it runs) costs its own tools and one warn line with file and line; a bad
 * declaration costs only that tool and one warn line with file and line.
 */
export async function loadLuaTools(opts: LuaSourceOptions): Promise<LuaTools> {
  const engine = new LazyEngine(opts.memoryBytes, opts.warn, opts.confine);
  // Under a policy, a new file's top-level code runs in a Worker of its own that may start
  // nothing, ended once every file is read; bodies load their file again where they run.
  const loader = opts.confine ? new LazyEngine(opts.memoryBytes, opts.warn, LOADING) : engine;
  const out: LuaTools = { tools: [], replaced: new Set(), engineStarted: false };
  for (const path of luaFiles(opts.dirs)) {
    let file: CachedFile;
    let stamp: string;
    try {
      stamp = stampOf(Deno.statSync(path));
      const cached = opts.cache.get(path, stamp);
      const known = opts.known?.get(path);
      if (cached) file = cached;
      else {
        const text = await read(path);
        if (known && known.sha256 === await sha256(text)) file = structuredClone(known.file);
        else {
          const loaded = await loader.load(path, text);
          file = {
            ...loaded,
            decls: loaded.decls.map(({ id: _id, ...rest }) => rest),
          };
        }
        opts.cache.set(path, stamp, file);
      }
    } catch (error) {
      opts.warn(`Lua file ${path} left out: ${(error as Error).message}`);
      continue;
    }
    if (file.error !== undefined) {
      const where = file.where && !file.error.includes(file.where) ? ` (at ${file.where})` : "";
      opts.warn(`Lua file ${path} left out: ${file.error}${where}`);
      continue;
    }
    const checks = file.checks ?? {};
    let checked = false;
    const check = (schema: JsonSchema) => {
      const key = JSON.stringify(schema);
      if (!(key in checks)) {
        checks[key] = schemaProblem(schema);
        checked = true;
      }
      return checks[key];
    };
    for (const raw of file.decls) {
      const made = declarationTool(raw, path, engine, opts, check);
      if (typeof made === "string") {
        const name = typeof raw.name === "string" ? `tool "${raw.name}"` : "a tool";
        opts.warn(`${path}:${raw.line}: ${name} left out: ${made}`);
        continue;
      }
      out.tools.push(made.tool);
      if (made.replaces) out.replaced.add(made.replaces);
    }
    // Checking a schema loads Ajv: a warm start reuses the verdicts instead.
    if (checked) opts.cache.set(path, stamp, { ...file, checks });
  }
  out.engineStarted = loader.started;
  if (loader !== engine) await loader.end();
  return out;
}

interface Spec {
  description?: unknown;
  needs?: unknown;
  transport?: unknown;
  program?: unknown;
  argv?: unknown;
  stdin?: unknown;
  builtin?: unknown;
  peer?: unknown;
  tool?: unknown;
}

const NO_PARAMETERS: JsonSchema = { type: "object", properties: {} };

/** Makes one registry entry, or says in one line why it cannot be made. */
function declarationTool(
  raw: Omit<RawDeclaration, "id">,
  path: string,
  engine: LazyEngine,
  opts: LuaSourceOptions,
  check: (schema: JsonSchema) => string | null,
): { tool: Tool; replaces?: Tool } | string {
  if (raw.problem) return raw.problem;
  const name = raw.name as string;
  const spec = (typeof raw.spec === "string" ? JSON.parse(raw.spec) : raw.spec ?? {}) as Spec;
  if (typeof spec.description !== "string" || spec.description.trim() === "") {
    return "description is required (a non-empty string)";
  }
  const transport = spec.transport ?? "lua";
  if (typeof transport !== "string" || !(TRANSPORTS as readonly string[]).includes(transport)) {
    return `transport must be one of ${TRANSPORTS.map((t) => `"${t}"`).join(", ")}`;
  }
  let target: Tool | undefined;
  let invoke: (call: Invocation, parameters: JsonSchema) => Promise<Outcome>;
  // What a call does, for the door: a body's execs pass it one by one when they start.
  let effects: Tool["effects"] = () => ({ ...NONE, execsAtRun: true });
  let needs: JsonSchema | string | undefined = readNeeds(spec.needs);
  if (typeof needs === "string") return needs;
  const where = `${path}:${raw.line}`;
  switch (transport) {
    case "lua": {
      if (!raw.has_run) return 'run is required with transport "lua" (a function)';
      invoke = (call) => runBody(engine, path, name, where, call);
      break;
    }
    case "command": {
      const named = spec.program ?? name;
      if (typeof named !== "string" || named === "") return "program must be a string";
      // A path is relative to the declaration's file; a bare name is looked up on PATH.
      const program = named.includes("/") ? resolve(dirname(path), named) : named;
      const mapping = commandMapping(needs ?? NO_PARAMETERS, spec);
      if (typeof mapping === "string") return mapping;
      const confine = opts.confine;
      effects = (_args, cwd) => ({ ...NONE, starts: [program], reads: [cwd] });
      invoke = async (call) => {
        const input = buildInput(mapping, call.args);
        if (!confine?.project) return runProgramCall(program, input, call);
        // A project's command came with the repository: calling the tool by hand approves
        // the tool, not the program it names, which is judged as its body's magi.exec.
        const job = { program, args: input.args, cwd: call.cwd, timeoutMs: call.timeoutMs };
        const verdict = await confine.judge(job, call, name);
        if ("refused" in verdict) {
          return { isError: true, code: "denied", note: `[magi: ${verdict.refused}]` };
        }
        return runProgramCall(verdict.program, input, { ...call, sandbox: verdict.wrap });
      };
      break;
    }
    case "builtin": {
      const wanted = spec.builtin ?? name;
      target = opts.builtins.find((b) => b.declaration.name === wanted);
      if (!target) return `there is no builtin ${JSON.stringify(wanted)}`;
      const builtin = target;
      effects = (args, cwd) => effectsOf(builtin, args, cwd);
      invoke = (call, parameters) => reach(opts.confine, builtin, call, parameters);
      break;
    }
    default: {
      const peerName = spec.peer ?? DEFAULT_PEER;
      const peer = opts.peers.find((p) => p.name === peerName);
      if (!peer) return `there is no peer ${JSON.stringify(peerName)} (config "peers")`;
      const remote = spec.tool ?? name;
      if (typeof remote !== "string" || remote === "") return "tool must be a string";
      const from = peerTool(peer, { name: remote, description: "", parameters: {} }, remote);
      target = opts.peerTools.find((t) =>
        t.declaration.name === remote && t.origin.where === from.origin.where
      );
      const via = target ?? from;
      effects = (args, cwd) => effectsOf(via, args, cwd);
      invoke = (call, parameters) => reach(opts.confine, via, call, parameters);
    }
  }
  if (needs === undefined) needs = target ? target.declaration.parameters : NO_PARAMETERS;
  const problem = check(needs);
  if (problem) return `needs: ${problem}`;
  const parameters = stripExtensions(needs);
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  const tool: Tool = {
    declaration: { name, description: spec.description, parameters },
    origin: { source: "lua", where },
    ownsCallFields: "cwd" in properties || "timeout_seconds" in properties,
    effects,
    invoke: (call) => invoke(call, parameters),
  };
  const replaces = target && target.declaration.name === name ? target : undefined;
  return { tool, replaces };
}

/**
 * Reads `needs`: absent stays undefined; a table becomes a JSON Schema object (`type`
 * defaults to "object"; empty Lua tables under keywords that take lists become lists).
 */
function readNeeds(needs: unknown): JsonSchema | string | undefined {
  if (needs === undefined || needs === null) return undefined;
  if (typeof needs !== "object" || Array.isArray(needs)) {
    return "needs must be a table (a JSON Schema object)";
  }
  const schema = listsFixed(needs as JsonSchema);
  if (schema.type === undefined) schema.type = "object";
  if (schema.type === "object" && schema.properties === undefined) schema.properties = {};
  return schema;
}

/** Keywords whose value is a list: an empty Lua table there means `[]`. */
const LIST_KEYWORDS = new Set([
  "required",
  "enum",
  "anyOf",
  "allOf",
  "oneOf",
  "prefixItems",
  "examples",
  "type",
]);
/** Keywords whose value maps names to schemas. */
const MAP_KEYWORDS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);

function listsFixed(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LIST_KEYWORDS.has(key) && isEmptyObject(value)) out[key] = [];
    else if (MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isObject(v) ? listsFixed(v) : v]),
      );
    } else if (Array.isArray(value)) {
      out[key] = value.map((v) => isObject(v) && !key.startsWith("x-") ? listsFixed(v) : v);
    } else if (isObject(value) && !key.startsWith("x-") && key !== "default" && key !== "const") {
      out[key] = listsFixed(value);
    } else out[key] = value;
  }
  return out;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEmptyObject(value: unknown): boolean {
  return isObject(value) && Object.keys(value).length === 0;
}

/** The argv mapping of a command declaration: `argv`/`stdin` fields, or `x-magi` in needs. */
function commandMapping(needs: JsonSchema, spec: Spec): ArgvMapping | string {
  const inNeeds = needs["x-magi"] ?? needs["x-snens"];
  if (inNeeds !== undefined && (spec.argv !== undefined || spec.stdin !== undefined)) {
    return 'give argv and stdin either as fields or as "x-magi" in needs, not both';
  }
  if (spec.argv !== undefined && !Array.isArray(spec.argv) && !isEmptyObject(spec.argv)) {
    return "argv must be a list";
  }
  const extension = inNeeds ?? {
    argv: isEmptyObject(spec.argv) ? [] : spec.argv ?? [],
    stdin: spec.stdin ?? { mode: "none" },
  };
  const mapping = readMapping({ ...needs, "x-magi": extension });
  return typeof mapping === "string" ? mapping.replace(/^x-magi\./, "") : mapping;
}

/** Calls a builtin or a peer tool with arguments checked against its own schema too. */
/** Invokes the tool a declaration names; a project's, past the confinement's gate first. */
async function reach(
  confine: LuaConfinement | undefined,
  target: Tool,
  call: Invocation,
  parameters: JsonSchema,
): Promise<Outcome> {
  const refused = await confine?.gateTool?.(target, call);
  return refused ?? await invokeTarget(target, call, parameters);
}

function invokeTarget(target: Tool, call: Invocation, parameters: JsonSchema): Promise<Outcome> {
  const own = target.declaration.parameters;
  if (own !== parameters && Object.keys(own).length > 0) {
    const problem = argumentsProblem(own, call.args);
    if (problem) {
      return Promise.resolve({
        isError: true,
        code: "bad_arguments",
        note:
          `[magi: invalid arguments for ${target.origin.source} "${target.declaration.name}": ${problem}]`,
      });
    }
  }
  return target.invoke(call);
}

/** Runs a Lua body and turns its reply into output and an outcome. */
async function runBody(
  engine: LazyEngine,
  path: string,
  name: string,
  where: string,
  call: Invocation,
): Promise<Outcome> {
  let reply: RunReply;
  try {
    const { backend, id } = await engine.handle(path, name);
    reply = await backend.run(id, call.args, call, name);
  } catch (error) {
    return { isError: true, note: `[magi: the Lua engine failed: ${(error as Error).message}]` };
  }
  if ("timeout" in reply) {
    if (call.signal.aborted) return { isError: true, code: "cancelled", note: "[magi: cancelled]" };
    return {
      isError: true,
      code: "timeout",
      note: `[magi: the Lua body of "${name}" ran past its time limit of ${
        call.timeoutMs / 1000
      } s and was stopped]`,
    };
  }
  if ("error" in reply) {
    const at = reply.where ?? where;
    const located = reply.error.includes(at) ? "" : ` (at ${at})`;
    return { isError: true, note: `[magi: Lua error: ${reply.error}${located}]` };
  }
  if ("ask" in reply) {
    return { isError: false, ask: { question: reply.ask, choices: reply.choices } };
  }
  await call.emit.said(reply.said);
  if (reply.shown !== undefined) await call.emit.shown(reply.shown);
  return { isError: reply.is_error === true };
}
