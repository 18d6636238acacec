/**
 * The MCP source (SPEC S1.1, S9): servers named in config key `mcp_servers` — started as
 * programs (stdio) or reached by URL (Streamable HTTP) — whose tools join the registry as
 * `NAME__tool`. Results pass the pipeline like any other: a server is never trusted to cap
 * or mask itself.
 *
 * Start-up never waits on a server that already kept it waiting. `"lazy"` (the default)
 * takes the tool list from a cache (per server config entry; refreshed whenever the server
 * lists its tools) and connects on the first call. With nothing cached (or `"start":
 * "eager"`) every server is started at once, in parallel, and waited for at most
 * `connect_timeout_seconds` (default 5): one not ready by then (or that failed) costs one
 * warning line, goes on starting in the background, and its tools join the runtime's registry when it is
 * (`onMcpToolsChanged` tells `magi mcp`, which sends `notifications/tools/list_changed`).
 * That the server was not ready is cached too: for {@link UNREADY_KEEP_MS} the next starts
 * do not wait for it at all and try it again in the background after {@link RETRY_DELAY_MS}
 * (a one-shot command has ended by then). A server's `tools/list_changed` re-lists that one server and swaps its
 * tools in the registry: a new tool can be called at once. A server that dies mid-call gives
 * an error result and is started again on the next call; every server magi started ends
 * when magi does. A server's
 * `elicitation/create` during a call is asked of the person through the call's question
 * channel (mcp_elicit.ts); with no one to ask it is declined unless defaults fill the form.
 *
 * @module
 */
import type * as NodeCrypto from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
import { type LaterMissing, laterMissing, plantedSince } from "../../policy/later_missing.ts";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type {
  CallToolResult,
  CreateMessageRequestSchema,
  CreateMessageResult,
  ElicitRequestSchema,
  ElicitResult,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  ResourceUpdatedNotificationSchema,
  Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  isCredentialName,
  type Masker,
  MIN_SECRET_BYTES,
  type Secret,
} from "../../pipeline/mask.ts";
import { maskedJson } from "../../pipeline/attachments.ts";
import { VERSION } from "../../core/version.ts";
import { emitContent } from "./content.ts";
import {
  type CatalogOptions,
  getPrompt,
  listPrompts,
  type McpPrompt,
  resourceTools,
  type ServerHandle,
} from "./catalog.ts";
import { answerForm, type Ask, type FormSchema } from "./elicit.ts";
import { answerSampling, type SamplingParams } from "./sampling.ts";
import type { ChildStdioTransport } from "./stdio.ts";
import { lateImport } from "../../core/lazy_require.ts";
import { sourceUrl } from "../../core/source_root.ts";
import { writePrivateFile } from "../../core/private.ts";
import { type PreRegistered, StoredOAuth } from "./oauth.ts";
import { Registry } from "../../registry/registry.ts";
import { schemaProblem, stripExtensions } from "../../core/json_schema.ts";
import type {
  Invocation,
  JsonSchema,
  Listing,
  Outcome,
  Progress,
  Relay,
  Tool,
  Warn,
} from "../../core/types.ts";

/** The MCP client SDK and the stdio transport (which needs it). */
interface Sdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ChildStdioTransport: typeof ChildStdioTransport;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
  ElicitRequestSchema: typeof ElicitRequestSchema;
  CreateMessageRequestSchema: typeof CreateMessageRequestSchema;
  ProgressNotificationSchema: typeof ProgressNotificationSchema;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  LoggingMessageNotificationSchema: typeof LoggingMessageNotificationSchema;
  ResourceUpdatedNotificationSchema: typeof ResourceUpdatedNotificationSchema;
}
let sdk: Sdk | undefined;

/**
 * Loads the SDK on the first start of a server: it takes a few hundred milliseconds, and a
 * start with every tool list cached (or no `mcp_servers`) needs none of it.
 */
async function loadSdk(): Promise<Sdk> {
  return sdk ??= await lateImport<typeof import("./sdk.ts")>(
    sourceUrl("lib/sources/mcp/sdk.ts"),
  );
}

/** One entry of config `mcp_servers` (its shape lives with the config: lib/config/shapes.ts). */
export type { McpServerSpec } from "../../config/shapes.ts";
import type { McpServerSpec } from "../../config/shapes.ts";

/** The separator between a server's name and its tool's name. */
export const SEPARATOR = "__";
/** Seconds allowed for starting a server and listing its tools, unless configured. */
export const START_TIMEOUT_SECONDS = 30;
/** Seconds magi's start waits for a server's tool list, unless configured. */
export const CONNECT_TIMEOUT_SECONDS = 5;
/**
 * Milliseconds after start-up before a server that was not ready last time is tried again
 * in the background (an unref'd timer: a one-shot command never pays for it).
 */
export const RETRY_DELAY_MS = 1500;
/** Milliseconds a note that a server was not ready is kept: after that it is waited for again. */
export const UNREADY_KEEP_MS = 10 * 60 * 1000;

/** What the MCP source needs from the runtime. */
export interface McpSourceOptions {
  /** The value of config `mcp_servers` (frozen: settings are built once). */
  servers: Readonly<Record<string, McpServerSpec>>;
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
  /**
   * Called with a server's tools (registry tools, as {@link mcpTools} gives them) whenever
   * they change after {@link mcpTools} returned: a server that became ready late, a fresh list
   * that differs from the cached one, `notifications/tools/list_changed`.
   */
  onServerTools?: (server: string, tools: Tool[]) => void;
  /** The folder of OAuth logins (mcp_oauth.ts); without it, no OAuth is tried. */
  authDir?: string;
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
  /** The latest runtime's masker (log messages are masked with it). */
  masker?: Masker;
  tools: McpTool[] | undefined;

  constructor(
    readonly name: string,
    readonly spec: McpServerSpec,
    private readonly cwd: string,
    private readonly env: Record<string, string>,
    private readonly maxMessageBytes: number | undefined,
    readonly auth?: StoredOAuth,
  ) {
    if (spec.command !== undefined) {
      this.#missing = laterMissing(this.#program(), env.HOME);
    }
  }

  /** What the files its command names that were missing when it was first configured. */
  readonly #missing: LaterMissing | undefined;

  #program() {
    return { argv: [this.spec.command!, ...this.spec.args ?? []], cwd: this.cwd };
  }

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
      CreateMessageRequestSchema,
      ProgressNotificationSchema,
      ToolListChangedNotificationSchema,
      LoggingMessageNotificationSchema,
      ResourceUpdatedNotificationSchema,
      McpError,
    } = await loadSdk();
    checkHeaders(this.spec.headers);
    // A file its command names that was missing at the start and is there now: not started.
    if (this.#missing) {
      const why = plantedSince(this.#program(), this.#missing, this.cwd, this.env.HOME);
      if (why) throw new Error(`MCP server "${this.name}" not started: ${why}`);
    }
    const transport: Transport = this.spec.url
      ? new StreamableHTTPClientTransport(new URL(this.spec.url), {
        requestInit: { headers: this.spec.headers ?? {} },
        // The fetch notes a 403's wanted scope for the next `magi mcp login`.
        ...(this.auth ? { authProvider: this.auth, fetch: this.auth.watching() } : {}),
      })
      : new ChildStdioTransport({
        command: this.spec.command!,
        args: this.spec.args ?? [],
        cwd: this.cwd,
        env: { ...this.env, ...this.spec.env },
        maxMessageBytes: this.maxMessageBytes,
      });
    const client = new Client({ name: "magi", version: VERSION }, {
      // Sampling is declared always; where it cannot be answered it is refused saying why.
      capabilities: { elicitation: { form: {} }, sampling: {} },
    });
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      const relay = this.#relay("elicitation");
      if (typeof relay === "function") {
        return relay(request.params, extra.signal) as Promise<ElicitResult>;
      }
      // Several clients' calls: declined, never asked of the wrong one.
      if (relay === SEVERAL) return { action: "decline" } as ElicitResult;
      return this.#elicit(request.params);
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      try {
        // Serving a client that declared sampling: its person and model answer, not magi's.
        const relay = this.#relay("sampling");
        if (typeof relay === "function") {
          return await relay(request.params, extra.signal) as CreateMessageResult;
        }
        if (relay !== undefined) {
          throw new Error(`MCP server "${this.name}" asked to use the model; refused: ${relay}`);
        }
        const masker = this.masker ?? { maskText: (t: string) => t } as Masker;
        return await answerSampling(
          this.name,
          request.params as SamplingParams,
          masker,
          extra.signal,
        ) as CreateMessageResult;
      } catch (error) {
        // -1: the code MCP's sampling examples give a request the person rejected.
        const refusal = new McpError(-1, messageOf(error));
        refusal.message = messageOf(error);
        throw refusal;
      }
    });
    // The server's log messages: passed on, masked (magi mcp's clients; stderr from warning up).
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const masker = this.masker;
      if (!masker) return;
      const data = maskedJson(n.params.data, masker);
      for (const listener of logListeners) listener(this.name, n.params.level, data);
    });
    // A resource it was asked to watch changed (resources/subscribe, by magi mcp's clients).
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      for (const listener of updateListeners) listener(this.name, n.params.uri);
    });
    // Progress by magi's own tokens. The SDK's handler drops a report that arrives with the
    // result (its response handling runs first and forgets the token); this one runs before
    // the call's result is taken.
    client.setNotificationHandler(ProgressNotificationSchema, (n) => {
      const { progressToken, ...report } = n.params;
      this.progress.get(progressToken)?.(report);
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (this.#client !== client) return;
      try {
        this.tools = await listAll(client, this.startTimeoutMs);
      } catch {
        return; // The server went away; its next start lists its tools again.
      }
      this.onTools?.(this.tools);
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
      // A server of resources or prompts alone lists no tools.
      this.tools = client.getServerCapabilities()?.tools ? await listAll(client, timeout) : [];
    } catch (error) {
      await client.close().catch(() => {});
      const end = this.describeEnd();
      throw new Error(`${messageOf(error)}${end ? ` (${end})` : ""}`);
    }
    this.#client = client;
    this.onTools?.(this.tools);
    // What lasted only as long as the last connection (resource subscriptions) is renewed
    // before the first request of this one.
    await Promise.all([...startListeners].map((l) => l(this.name, client).catch(() => {})));
    return client;
  }

  /** The progress listeners of the calls in progress, by their progress token. */
  readonly progress = new Map<string | number, (p: Progress) => void>();

  /** The question channels of the calls in progress; the latest answers elicitation. */
  readonly asking: Ask[] = [];

  /** The relays of the calls in progress (`magi mcp`'s clients), in order. */
  readonly relays: Relay[] = [];

  /**
   * How a request of this server goes on to the client of the calls in progress (`magi mcp`):
   * its relay when that client declared the request and every call of this server in
   * progress is that client's; else why not (over stdio a request names no call, so with two
   * clients' calls it could reach the wrong one). Undefined when no call has a relay: magi
   * answers the request itself.
   */
  #relay(kind: "sampling" | "elicitation"): Relay[typeof kind] | string | undefined {
    const last = this.relays.at(-1);
    if (!last) return undefined;
    if (this.relays.some((r) => r.owner !== last.owner)) {
      return SEVERAL;
    }
    return last[kind] ?? `the MCP client did not declare ${kind}`;
  }

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

/** Why a server's request is not passed on while calls of several clients are in progress. */
const SEVERAL = "calls of several MCP clients are in progress; it cannot tell whose to ask";

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

const startListeners = new Set<(server: string, client: Client) => Promise<void>>();

/**
 * Calls `listener` each time a server magi reaches has started (the first time, and each
 * time it is started again after it ended) with its name and its new client; the start waits
 * for the listener (whose failure costs only itself) before any other request is sent.
 *
 * @returns the function that removes the listener
 */
export function onMcpServerStarted(
  listener: (server: string, client: Client) => Promise<void>,
): () => void {
  startListeners.add(listener);
  return () => void startListeners.delete(listener);
}

const updateListeners = new Set<(server: string, uri: string) => void>();

/**
 * Calls `listener` with the server's name and the URI of each
 * `notifications/resources/updated` a server magi reaches sends (the URI as the server gave
 * it; the listener masks what it passes on).
 *
 * @returns the function that removes the listener
 */
export function onMcpResourceUpdated(listener: (server: string, uri: string) => void): () => void {
  updateListeners.add(listener);
  return () => void updateListeners.delete(listener);
}

/** A server's log message: its name, the level, the data (masked). */
export type McpLogListener = (server: string, level: string, data: unknown) => void;
const logListeners = new Set<McpLogListener>();

/**
 * Calls `listener` with each `notifications/message` (MCP logging) a server magi reaches
 * sends, its data masked. Until one is added, nothing is done with them.
 *
 * @returns the function that stops calling it
 */
export function onMcpLog(listener: McpLogListener): () => void {
  logListeners.add(listener);
  return () => void logListeners.delete(listener);
}

/** Called when a server's tools changed after start-up. */
const changeListeners = new Set<(server: string) => void>();

/**
 * Calls `listener` with a server's name whenever its tools changed after start-up (it became
 * ready late, its fresh list differs from the cached one, or it sent
 * `notifications/tools/list_changed`), after the latest runtime's registry holds them:
 * `magi mcp` tells its clients then.
 *
 * @returns the function that stops calling it
 */
export function onMcpToolsChanged(listener: (server: string) => void): () => void {
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
 * Refuses a header HTTP cannot carry — a value with a character past ASCII (a `…` pasted from
 * a page) or a line break — naming the header, never its value (it may be a token).
 *
 * @throws Error `header "Authorization": its value must be plain ASCII text on one line`
 */
function checkHeaders(headers: Readonly<Record<string, string>> | undefined): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!/^[\t\x20-\x7e]*$/.test(value)) {
      throw new Error(`header "${name}": its value must be plain ASCII text on one line`);
    }
  }
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
    ...(spec.oauth ? { oauth: values(spec.oauth as Record<string, string>) as PreRegistered } : {}),
  };
}

/** A value too plain to be a secret: an absolute path, a number, true/false/yes/no/on/off. */
const PLAIN_VALUE = /^(?:\/[^\s]*|-?\d+(?:\.\d+)?|true|false|yes|no|on|off)$/i;

/**
 * The secrets a server's config entry holds: every value of its `env` and `headers` (after
 * `${NAME}` expansion), masked as `$VAR` (an `env` entry) or `$SECRET` (a header), except
 * values shorter than {@link MIN_SECRET_BYTES}, plain values ({@link PLAIN_VALUE}) and an `env` value that
 * is a bare `${NAME}` under a name that marks no credential (`"PATH": "${PATH}"`: magi's own
 * masker judges that variable by its name and shape).
 */
export function specSecrets(
  raw: McpServerSpec,
  env: Record<string, string>,
): Secret[] {
  const expanded = expandSpec(raw, env, () => {});
  const secrets: Secret[] = [];
  const take = (kind: string, rawValues: unknown, values: Record<string, string> | undefined) => {
    if (typeof rawValues !== "object" || rawValues === null || !values) return;
    for (const [key, value] of Object.entries(values)) {
      const written = (rawValues as Record<string, unknown>)[key];
      if (typeof written !== "string") continue;
      const bare = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(written);
      if (bare && kind === "env" && !isCredentialName(key)) continue;
      if (new TextEncoder().encode(value).length < MIN_SECRET_BYTES) continue;
      if (PLAIN_VALUE.test(value)) continue;
      const masked = kind === "env" ? key : "SECRET";
      secrets.push({ name: masked.replace(/[^A-Za-z0-9_]/g, "_"), value });
    }
  };
  take("env", raw.env, expanded.env);
  take("header", raw.headers, expanded.headers);
  // A pre-registered client's secret or private key, and an ID token (an id is no secret).
  for (const field of ["client_secret", "idp_id_token"] as const) {
    const written = raw.oauth?.[field];
    const value = expanded.oauth?.[field];
    take(
      "header",
      written === undefined ? undefined : { [field]: written },
      value === undefined ? undefined : { [field]: value },
    );
  }
  secrets.push(...keySecrets(expanded.oauth?.private_key));
  return secrets;
}

/**
 * A PEM private key's secrets: the whole text and each line of its base64 body, as
 * `$PRIVATE_KEY` (a block is masked by its shape anyway; a line quoted alone is not).
 */
function keySecrets(pem: string | undefined): Secret[] {
  if (!pem) return [];
  const lines = pem.split(/\r?\n/).map((l) => l.trim())
    .filter((l) =>
      !l.startsWith("-----") && new TextEncoder().encode(l).length >= MIN_SECRET_BYTES
    );
  return [pem, ...lines].map((value) => ({ name: "PRIVATE_KEY", value }));
}

function connectionFor(name: string, raw: McpServerSpec, opts: McpSourceOptions): Connection {
  const spec = expandSpec(
    raw,
    opts.env,
    (v) => opts.warn(`MCP server "${name}": \${${v}} is not set; it stands for an empty string`),
  );
  const base = opts.configFile ? dirname(opts.configFile) : opts.cwd;
  const cwd = spec.cwd ? (isAbsolute(spec.cwd) ? spec.cwd : resolve(base, spec.cwd)) : opts.cwd;
  const key = JSON.stringify([name, spec, cwd, opts.env, opts.maxMessageBytes, opts.authDir]);
  let conn = pool.get(key);
  if (!conn) {
    // OAuth for a URL server, unless its config sends its own Authorization header.
    const ownAuth = Object.keys(spec.headers ?? {}).some((h) =>
      h.toLowerCase() === "authorization"
    );
    const auth = spec.url && opts.authDir && !ownAuth
      ? new StoredOAuth(name, StoredOAuth.fileFor(opts.authDir, cacheKey(name, raw)), {
        client: spec.oauth,
        resource: spec.url,
      })
      : undefined;
    pool.set(key, conn = new Connection(name, spec, cwd, opts.env, opts.maxMessageBytes, auth));
  }
  return conn;
}

/**
 * The tool-list cache: server key → tool list, masked (a description may quote a
 * credential) and written atomically as a private file (0600 in a 0700 folder), or a note
 * that the server was not ready at its last start (`{unready, at}`, with the time in ms). A
 * server's key is the SHA-256 of its name and config entry, so the entry's own values (a
 * token in `env` or `headers`) are not written.
 */
type CacheEntry = McpTool[] | Unready;
type ToolCache = Record<string, CacheEntry>;
/** A server that was not ready at its last start: why, and when (ms since the epoch). */
interface Unready {
  unready: string;
  at: number;
}

/** The cache key of a server. */
export function cacheKey(name: string, spec: McpServerSpec): string {
  return nodeCrypto().createHash("sha256").update(JSON.stringify([name, spec])).digest("hex");
}

/**
 * `node:crypto`, loaded on first use: importing it at start-up costs about 35 ms, and a config
 * without MCP servers never needs it.
 */
function nodeCrypto(): typeof NodeCrypto {
  // deno-lint-ignore no-explicit-any
  return (globalThis as any).process.getBuiltinModule("node:crypto");
}

const KEY_SHAPE = /^[0-9a-f]{64}$/;

function readCache(path: string): ToolCache {
  try {
    const data = JSON.parse(Deno.readTextFileSync(path));
    if (typeof data !== "object" || data === null) return {};
    // Entries of older magis were keyed by the raw config entry: dropped.
    return Object.fromEntries(
      Object.entries(data).filter(([k, v]) =>
        KEY_SHAPE.test(k) &&
        (Array.isArray(v) || (typeof v === "object" && v !== null && "unready" in v))
      ),
    ) as ToolCache;
  } catch {
    return {};
  }
}

function writeCache(path: string, key: string, entry: CacheEntry, masker: Masker): void {
  try {
    const cache = readCache(path);
    cache[key] = maskedJson(entry, masker) as CacheEntry;
    writePrivateFile(path, JSON.stringify(cache));
  } catch {
    // A cache that cannot be written only costs a start next time.
  }
}

/** Resolves with `undefined` after `ms`, or with the client once it is ready. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Gathers every configured server's tools. Never throws and never waits longer than the
 * largest `connect_timeout_seconds`: a server that cannot start, or is not ready by then,
 * costs one `warn` line; a late one's tools reach `opts.onServerTools` when it is ready.
 */
export async function mcpTools(opts: McpSourceOptions): Promise<Tool[]> {
  const cache = readCache(opts.cachePath);
  const used = new Set<Connection>();
  inUse = used;
  const lists = await Promise.all(
    Object.entries(opts.servers).map(async ([name, spec]) => {
      const conn = connectionFor(name, spec, opts);
      used.add(conn);
      conn.masker = opts.masker;
      const key = cacheKey(name, spec);
      // What the registry was given for this server; a different list later is a change.
      let given: string | undefined;
      const give = (tools: McpTool[]) => {
        given = JSON.stringify(tools);
        return toolsOf(conn, spec, tools, opts);
      };
      conn.onTools = (tools) => {
        writeCache(opts.cachePath, key, tools, opts.masker);
        if (given === undefined || given === JSON.stringify(tools)) return;
        const registryTools = give(tools);
        opts.onServerTools?.(name, registryTools);
        for (const listener of changeListeners) listener(name);
      };
      if (conn.tools) return give(conn.tools);
      const entry: CacheEntry | undefined = cache[key];
      if (Array.isArray(entry) && spec.start !== "eager") return give(entry);
      const cached = entry && !Array.isArray(entry) && Date.now() - entry.at <= UNREADY_KEEP_MS
        ? entry
        : undefined;
      const late = (error: unknown) => {
        writeCache(opts.cachePath, key, { unready: messageOf(error), at: Date.now() }, opts.masker);
      };
      if (cached) {
        // Not ready last time: not waited for; tried again in the background, later.
        const timer = setTimeout(() => conn.client().catch(late), RETRY_DELAY_MS);
        Deno.unrefTimer(timer);
        opts.warn(
          `MCP server "${name}" left out for now: at its last start ${cached.unready}; ` +
            "it is tried again in the background",
        );
        given = "[]";
        return [];
      }
      const starting = conn.client();
      const waitS = spec.connect_timeout_seconds ?? CONNECT_TIMEOUT_SECONDS;
      try {
        const client = await within(starting, waitS * 1000);
        if (client) return give(conn.tools ?? []);
      } catch (error) {
        late(error);
        opts.warn(`MCP server "${name}" left out: ${messageOf(error)}`);
        return [];
      }
      const why = `it was not ready within ${waitS} s`;
      late(why);
      opts.warn(`MCP server "${name}" not ready within ${waitS} s; its tools join when it is`);
      given = "[]";
      starting.catch(late);
      return [];
    }),
  );
  const handles = [...used].map((conn): ServerHandle => ({
    name: conn.name,
    client: () => conn.client(),
    connectMs: (conn.spec.connect_timeout_seconds ?? CONNECT_TIMEOUT_SECONDS) * 1000,
  }));
  catalog = { servers: () => handles, masker: opts.masker, spillDir: opts.spillDir };
  const resources = handles.length ? resourceTools(catalog) : [];
  return [...lists.flat(), ...resources];
}

export type { McpPrompt };

/** How the catalogue reaches the latest runtime's servers. */
let catalog: CatalogOptions | undefined;

/** How the latest runtime reaches its servers' resources and prompts (for `magi mcp`). */
export function mcpCatalog(): CatalogOptions | undefined {
  return catalog;
}

/**
 * Every prompt the latest runtime's MCP servers offer, for chat's slash commands
 * (`/<server>:<name>`); empty with no servers. See mcp_catalog.ts.
 */
export function listMcpPrompts(): Promise<McpPrompt[]> {
  return catalog ? listPrompts(catalog) : Promise.resolve([]);
}

/**
 * One upstream prompt's messages as the text of a user message, masked.
 *
 * @throws Error saying why, when the server cannot be reached or refuses the prompt
 */
export function getMcpPrompt(
  server: string,
  name: string,
  args: Record<string, string> = {},
): Promise<string> {
  if (!catalog) return Promise.reject(new Error("no MCP servers are configured"));
  return getPrompt(catalog, server, name, args);
}

/**
 * `registry` with server `server`'s MCP tools replaced by `tools` (a new registry; the
 * runtime swaps it in, so a new tool can be called at once).
 */
export function withServerTools(
  registry: Registry,
  server: string,
  tools: readonly Tool[],
  warn: Warn,
  mask: (text: string) => string,
): Registry {
  const prefix = `mcp:${server}/`;
  const kept = registry.list().filter((t) =>
    !(t.origin.source === "mcp" && t.origin.where.startsWith(prefix))
  );
  return new Registry([...kept, ...tools], warn, mask);
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
    const execution = (remote as { execution?: { taskSupport?: string } }).execution;
    if (execution?.taskSupport === "required") {
      opts.warn(
        `tool "${name}" (MCP server "${conn.name}") left out: it can only be called as a task, ` +
          "which magi does not do",
      );
      continue;
    }
    const properties = (parameters.properties ?? {}) as Record<string, unknown>;
    const listing = maskedJson({
      ...(remote.title ? { title: remote.title } : {}),
      ...(remote.outputSchema ? { outputSchema: remote.outputSchema } : {}),
      ...(remote.annotations ? { annotations: remote.annotations } : {}),
    }, opts.masker) as Listing;
    tools.push({
      ...(Object.keys(listing).length ? { listing } : {}),
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

/** The progress tokens given so far. */
let progressTokens = 0;

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
  if (call.relay) conn.relays.push(call.relay);
  // With a listener, the call asks for progress under a token of magi's own.
  const token = call.progress ? `magi-${++progressTokens}` : undefined;
  if (token) conn.progress.set(token, call.progress!);
  try {
    result = await client.callTool(
      { name: remote, arguments: call.args, ...(token ? { _meta: { progressToken: token } } : {}) },
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
    // A request refused for want of scope: the next login asks for it (mcp_oauth.ts).
    const wanted = conn.auth?.wantedScope();
    const more = wanted
      ? `; it needs more access (scope "${wanted}"): run \`magi mcp login ${conn.name}\``
      : "";
    return {
      isError: true,
      note: `[magi: ${who} answered with an error: ${messageOf(error)}${more}]`,
    };
  } finally {
    if (call.ask) conn.asking.splice(conn.asking.lastIndexOf(call.ask), 1);
    if (call.relay) conn.relays.splice(conn.relays.lastIndexOf(call.relay), 1);
    if (token) conn.progress.delete(token);
  }
  await emitContent(result, call.emit, {
    spillDir: opts.spillDir,
    masker: opts.masker,
    label: `${conn.name}${SEPARATOR}${remote}`,
  });
  return { isError: result.isError === true };
}
