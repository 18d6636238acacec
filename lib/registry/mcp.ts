/**
 * The MCP source (SPEC S1.1, S9): servers named in config key `mcp_servers` — started as
 * programs (stdio) or reached by URL (Streamable HTTP) — whose tools join the registry as
 * `NAME__tool`. Results pass the pipeline like any other: a server is never trusted to cap
 * or mask itself.
 *
 * Start-up: `"start": "eager"` connects while magi starts; `"lazy"` (the default) takes the
 * tool list from a cache (refreshed whenever the server is started) and connects on the
 * first call, or at start-up when nothing is cached. A server that cannot start costs only
 * its tools (one warning line); one that dies mid-call gives an error result and is started
 * again on the next call; every server magi started ends when magi does. A server's
 * `elicitation/create` during a call is asked of the person through the call's question
 * channel (mcp_elicit.ts); with no one to ask it is declined unless defaults fill the form.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  CallToolResult,
  ElicitRequestSchema,
  ElicitResult,
  ErrorCode,
  McpError,
  Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Masker } from "../pipeline/mask.ts";
import { VERSION } from "../version.ts";
import { emitContent } from "./mcp_content.ts";
import { answerForm, type Ask, type FormSchema } from "./mcp_elicit.ts";
import type { ChildStdioTransport } from "./mcp_stdio.ts";
import { lateImport } from "../lazy_require.ts";
import { writePrivateFile } from "../output/private.ts";
import { schemaProblem, stripExtensions } from "./schema.ts";
import type { Invocation, JsonSchema, Outcome, Tool, Warn } from "./types.ts";

/** The MCP client SDK and the stdio transport (which needs it). */
interface Sdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ChildStdioTransport: typeof ChildStdioTransport;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
  ElicitRequestSchema: typeof ElicitRequestSchema;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
}
let sdk: Sdk | undefined;

/**
 * Loads the SDK on the first start of a server: it takes a few hundred milliseconds, and a
 * start with every tool list cached (or no `mcp_servers`) needs none of it.
 */
async function loadSdk(): Promise<Sdk> {
  return sdk ??= await lateImport<typeof import("./mcp_sdk.ts")>(
    new URL("./mcp_sdk.ts", import.meta.url),
  );
}

/** One entry of config `mcp_servers`: a program to start, or a URL. */
export interface McpServerSpec {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Working directory; relative to the config file's folder. */
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Limit for starting, and the most any call to its tools may take, in seconds. */
  timeout_seconds?: number;
  start?: "lazy" | "eager";
}

/** The separator between a server's name and its tool's name. */
export const SEPARATOR = "__";
/** Seconds allowed for starting a server and listing its tools, unless configured. */
export const START_TIMEOUT_SECONDS = 30;

/** What the MCP source needs from the runtime. */
export interface McpSourceOptions {
  /** The value of config `mcp_servers`. */
  servers: Record<string, McpServerSpec>;
  /** The config file `mcp_servers` came from (relative `cwd`s resolve against its folder). */
  configFile: string | undefined;
  /** magi's working directory (for a server without `cwd` and no config file). */
  cwd: string;
  /** The environment servers start with (the server's own `env` is added on top). */
  env: Record<string, string>;
  spillDir: string;
  masker: Masker;
  /** A JSON file remembering each server's tool list, for lazy start. */
  cachePath: string;
  /** The largest message read from a stdio server, in bytes (config `limits.mcp_message_bytes`). */
  maxMessageBytes?: number;
  warn: Warn;
}

/** A registry-safe tool name for a server's tool: `NAME__tool`, at most 64 characters. */
export function mappedName(server: string, tool: string): string {
  const safe = tool.replace(/[^a-zA-Z0-9_-]/g, "_");
  return `${server}${SEPARATOR}${safe}`.slice(0, 64);
}

/** One server: started on demand, started again after it died. */
class Connection {
  #client: Client | undefined;
  #transport: Transport | undefined;
  #starting: Promise<Client> | undefined;
  /** Called with the fresh tool list after each start. */
  onTools?: (tools: McpTool[]) => void;
  tools: McpTool[] | undefined;

  constructor(
    readonly name: string,
    private readonly spec: McpServerSpec,
    private readonly cwd: string,
    private readonly env: Record<string, string>,
    private readonly maxMessageBytes: number | undefined,
  ) {}

  get startTimeoutMs(): number {
    return (this.spec.timeout_seconds ?? START_TIMEOUT_SECONDS) * 1000;
  }

  /** The connected client, starting the server when it is not running. */
  client(): Promise<Client> {
    this.#starting ??= this.#start().catch((error) => {
      this.#starting = undefined;
      throw error;
    });
    return this.#starting;
  }

  /** How the server ended (exit status, stderr's tail), when it was a program. */
  describeEnd(): string {
    const t = this.#transport;
    return sdk && t instanceof sdk.ChildStdioTransport ? t.describeEnd() : "";
  }

  async #start(): Promise<Client> {
    const {
      Client,
      StreamableHTTPClientTransport,
      ChildStdioTransport,
      ElicitRequestSchema,
      ToolListChangedNotificationSchema,
    } = await loadSdk();
    const transport: Transport = this.spec.url
      ? new StreamableHTTPClientTransport(new URL(this.spec.url), {
        requestInit: { headers: this.spec.headers ?? {} },
      })
      : new ChildStdioTransport({
        command: this.spec.command!,
        args: this.spec.args ?? [],
        cwd: this.cwd,
        env: { ...this.env, ...this.spec.env },
        maxMessageBytes: this.maxMessageBytes,
      });
    const client = new Client({ name: "magi", version: VERSION }, {
      capabilities: { elicitation: { form: {} } },
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => this.#elicit(request.params));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (this.#client !== client) return;
      try {
        this.tools = await listAll(client, this.startTimeoutMs);
      } catch {
        return; // The server went away; its next start lists its tools again.
      }
      this.onTools?.(this.tools);
      for (const listener of changeListeners) listener();
    });
    this.#transport = transport;
    client.onclose = () => {
      if (this.#client === client) {
        this.#client = undefined;
        this.#starting = undefined;
      }
    };
    const timeout = this.startTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.tools = await listAll(client, timeout);
    } catch (error) {
      await client.close().catch(() => {});
      const end = this.describeEnd();
      throw new Error(`${messageOf(error)}${end ? ` (${end})` : ""}`);
    }
    this.#client = client;
    this.onTools?.(this.tools);
    return client;
  }

  /** The question channels of the calls in progress; the latest answers elicitation. */
  readonly asking: Ask[] = [];

  /** Answers the server's `elicitation/create` by asking the person, field by field. */
  async #elicit(
    params: { mode?: string; message: string; requestedSchema?: unknown },
  ): Promise<ElicitResult> {
    if (params.mode === "url" || !params.requestedSchema) return { action: "decline" };
    // With no one to ask, a form whose every field has a default is still filled in.
    const ask: Ask = this.asking.at(-1) ?? (() => Promise.resolve(undefined));
    const schema = params.requestedSchema as FormSchema;
    return await answerForm(params.message, schema, ask) as ElicitResult;
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#starting = undefined;
    await client?.close().catch(() => {});
  }
}

/** Every tool a server lists, page by page. */
async function listAll(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Called when a running server announces that its tools changed. */
const changeListeners = new Set<() => void>();

/**
 * Calls `listener` whenever a server magi started sends `notifications/tools/list_changed`
 * (after its fresh list is kept): `magi mcp` rebuilds its registry then.
 *
 * @returns the function that stops calling it
 */
export function onMcpToolsChanged(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => void changeListeners.delete(listener);
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^MCP error -?\d+: /, "");
}

/** Servers started by this process, by what identifies them; shared across runtimes. */
const pool = new Map<string, Connection>();

/** The servers the latest {@link mcpTools} call used. */
let inUse = new Set<Connection>();

/** Ends the servers the latest runtime no longer names (after a config change). */
export async function closeUnusedMcpServers(): Promise<void> {
  const unused = [...pool.entries()].filter(([, conn]) => !inUse.has(conn));
  for (const [key] of unused) pool.delete(key);
  await Promise.all(unused.map(([, conn]) => conn.close()));
}

/** Ends every server this process started (they are also killed when magi exits). */
export async function closeMcpServers(): Promise<void> {
  const all = [...pool.values()];
  pool.clear();
  await Promise.all(all.map((c) => c.close()));
}

/**
 * Replaces `${NAME}` in a server's strings (command, args, env values, cwd, url, header
 * values) with magi's environment variable NAME, so a token need not be written into the
 * config; an unset variable becomes empty and is reported.
 */
export function expandSpec(
  spec: McpServerSpec,
  env: Record<string, string>,
  missing: (name: string) => void,
): McpServerSpec {
  const expand = (text: string) =>
    text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      if (env[name] === undefined) missing(name);
      return env[name] ?? "";
    });
  const values = (record: Record<string, string> | undefined) =>
    record && Object.fromEntries(Object.entries(record).map(([k, v]) => [k, expand(v)]));
  return {
    ...spec,
    ...(spec.command !== undefined ? { command: expand(spec.command) } : {}),
    ...(spec.args ? { args: spec.args.map(expand) } : {}),
    ...(spec.env ? { env: values(spec.env) } : {}),
    ...(spec.cwd !== undefined ? { cwd: expand(spec.cwd) } : {}),
    ...(spec.url !== undefined ? { url: expand(spec.url) } : {}),
    ...(spec.headers ? { headers: values(spec.headers) } : {}),
  };
}

function connectionFor(name: string, raw: McpServerSpec, opts: McpSourceOptions): Connection {
  const spec = expandSpec(
    raw,
    opts.env,
    (v) => opts.warn(`MCP server "${name}": \${${v}} is not set; it stands for an empty string`),
  );
  const base = opts.configFile ? dirname(opts.configFile) : opts.cwd;
  const cwd = spec.cwd ? (isAbsolute(spec.cwd) ? spec.cwd : resolve(base, spec.cwd)) : opts.cwd;
  const key = JSON.stringify([name, spec, cwd, opts.env, opts.maxMessageBytes]);
  let conn = pool.get(key);
  if (!conn) {
    pool.set(key, conn = new Connection(name, spec, cwd, opts.env, opts.maxMessageBytes));
  }
  return conn;
}

/**
 * The tool-list cache: server key → tool list, masked (a description may quote a
 * credential) and written atomically as a private file (0600 in a 0700 folder). A server's
 * key is the SHA-256 of its name and config entry, so the entry's own values (a token in
 * `env` or `headers`) are not written.
 */
type ToolCache = Record<string, McpTool[]>;

/** The cache key of a server. */
export function cacheKey(name: string, spec: McpServerSpec): string {
  return createHash("sha256").update(JSON.stringify([name, spec])).digest("hex");
}

const KEY_SHAPE = /^[0-9a-f]{64}$/;

function readCache(path: string): ToolCache {
  try {
    const data = JSON.parse(Deno.readTextFileSync(path));
    if (typeof data !== "object" || data === null) return {};
    // Entries of older magis were keyed by the raw config entry: dropped.
    return Object.fromEntries(Object.entries(data).filter(([k]) => KEY_SHAPE.test(k))) as ToolCache;
  } catch {
    return {};
  }
}

/** Every string in `value` masked (keys too). */
function maskedDeep(value: unknown, masker: Masker): unknown {
  if (typeof value === "string") return masker.maskText(value);
  if (Array.isArray(value)) return value.map((v) => maskedDeep(v, masker));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [masker.maskText(k), maskedDeep(v, masker)]),
    );
  }
  return value;
}

function writeCache(path: string, key: string, tools: McpTool[], masker: Masker): void {
  try {
    const cache = readCache(path);
    cache[key] = maskedDeep(tools, masker) as McpTool[];
    writePrivateFile(path, JSON.stringify(cache));
  } catch {
    // A cache that cannot be written only costs a start next time.
  }
}

/**
 * Gathers every configured server's tools. Never throws: a server that cannot start or
 * list its tools costs one `warn` line and its tools.
 */
export async function mcpTools(opts: McpSourceOptions): Promise<Tool[]> {
  const cache = readCache(opts.cachePath);
  const used = new Set<Connection>();
  inUse = used;
  const lists = await Promise.all(
    Object.entries(opts.servers).map(async ([name, spec]) => {
      const conn = connectionFor(name, spec, opts);
      used.add(conn);
      const key = cacheKey(name, spec);
      conn.onTools = (tools) => writeCache(opts.cachePath, key, tools, opts.masker);
      let tools = conn.tools ?? (spec.start === "eager" ? undefined : cache[key]);
      if (!tools) {
        try {
          await conn.client();
          tools = conn.tools ?? [];
        } catch (error) {
          opts.warn(`MCP server "${name}" left out: ${messageOf(error)}`);
          return [];
        }
      }
      return toolsOf(conn, spec, tools, opts);
    }),
  );
  return lists.flat();
}

function toolsOf(
  conn: Connection,
  spec: McpServerSpec,
  listed: McpTool[],
  opts: McpSourceOptions,
): Tool[] {
  const taken = new Set<string>();
  const tools: Tool[] = [];
  for (const remote of listed) {
    let name = mappedName(conn.name, remote.name);
    for (let n = 2; taken.has(name); n++) name = `${name.slice(0, 60)}_${n}`;
    taken.add(name);
    const parameters = stripExtensions((remote.inputSchema ?? { type: "object" }) as JsonSchema);
    const problem = schemaProblem(parameters);
    if (problem) {
      opts.warn(`tool "${name}" (MCP server "${conn.name}") left out: ${problem}`);
      continue;
    }
    const properties = (parameters.properties ?? {}) as Record<string, unknown>;
    tools.push({
      declaration: {
        name,
        description: remote.description ?? remote.title ??
          `${remote.name} (MCP server ${conn.name})`,
        parameters,
      },
      origin: { source: "mcp", where: `mcp:${conn.name}/${remote.name}` },
      ownsCallFields: "cwd" in properties || "timeout_seconds" in properties,
      invoke: (call) => callRemote(conn, spec, remote.name, call, opts),
    });
  }
  return tools;
}

async function callRemote(
  conn: Connection,
  spec: McpServerSpec,
  remote: string,
  call: Invocation,
  opts: McpSourceOptions,
): Promise<Outcome> {
  const who = `MCP server "${conn.name}"`;
  let client: Client;
  try {
    client = await conn.client();
  } catch (error) {
    return { isError: true, note: `[magi: ${who} cannot start: ${messageOf(error)}]` };
  }
  const limitMs = Math.min(
    call.timeoutMs,
    spec.timeout_seconds ? spec.timeout_seconds * 1000 : Infinity,
  );
  let result: CallToolResult;
  if (call.ask) conn.asking.push(call.ask);
  try {
    result = await client.callTool(
      { name: remote, arguments: call.args },
      undefined,
      { signal: call.signal, timeout: limitMs, maxTotalTimeout: limitMs },
    ) as CallToolResult;
  } catch (error) {
    if (call.signal.aborted) {
      return { isError: true, code: "cancelled", note: "[magi: the call was cancelled]" };
    }
    const { McpError, ErrorCode } = await loadSdk();
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return {
        isError: true,
        code: "timeout",
        note: `[magi: ${who} gave no result within ${limitMs / 1000} s; the call was cancelled]`,
      };
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      await conn.close();
      const end = conn.describeEnd();
      return {
        isError: true,
        note: `[magi: ${who} ended during the call${
          end ? ` (${end})` : ""
        }; it is started again on the next call]`,
      };
    }
    return { isError: true, note: `[magi: ${who} answered with an error: ${messageOf(error)}]` };
  } finally {
    if (call.ask) conn.asking.splice(conn.asking.lastIndexOf(call.ask), 1);
  }
  await emitContent(result, call.emit, {
    spillDir: opts.spillDir,
    masker: opts.masker,
    label: `${conn.name}${SEPARATOR}${remote}`,
  });
  return { isError: result.isError === true };
}
