/**
 * Serving MCP over Streamable HTTP on loopback (`magi mcp --http`): one SDK server per
 * session at `http://127.0.0.1:PORT/mcp`, with DNS-rebinding protection (only the loopback
 * Host names, and loopback Origins when a browser sends one; checked by `http_guard.ts` and
 * again by the SDK), a bearer token on every request (unless `--no-auth`) and resumable SSE
 * streams (a bounded in-memory event store; a session's priming events follow the revision
 * it negotiated, session_protocol.ts).
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { BoundedEventStore } from "./event_store.ts";
import { refusal } from "./http_guard.ts";
import { SessionProtocol } from "./session_protocol.ts";
import { createMcpServer, type RuntimeGetter } from "./server.ts";

/** How to serve. */
export interface HttpOptions {
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Called once the server listens, with its MCP endpoint URL. */
  onListen(url: string): void;
  /** Every live per-session server (for `notifications/tools/list_changed`). */
  servers: Set<Server>;
  /** The bearer token every request must carry; undefined serves without (`--no-auth`). */
  token: string | undefined;
}

/** A running HTTP server; `finished` resolves after `shutdown()`. */
export interface HttpServing {
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

const HOSTNAME = "127.0.0.1";
/** Milliseconds a client waits before reconnecting a broken SSE stream (the SSE `retry` field). */
const RETRY_MS = 1000;
/**
 * Sessions kept at most; past this the least recently used one is closed (its client gets
 * 404 and starts a new session), so clients that never send DELETE cannot grow memory.
 */
export const MAX_SESSIONS = 64;

/** Starts serving; never listens beyond 127.0.0.1. */
export function serveHttp(current: RuntimeGetter, opts: HttpOptions): HttpServing {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const protocols = new WeakMap<WebStandardStreamableHTTPServerTransport, SessionProtocol>();
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];

  const open = async (): Promise<WebStandardStreamableHTTPServerTransport> => {
    const server = createMcpServer(current);
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableDnsRebindingProtection: true,
        // A body over the cap is refused with 413 as it streams (the SDK's own bound).
        maxRequestBodySize: current().config.values["limits.mcp_message_bytes"],
        eventStore: new BoundedEventStore(),
        retryInterval: RETRY_MS,
        allowedHosts,
        allowedOrigins,
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
          if (sessions.size > MAX_SESSIONS) {
            const [, oldest] = sessions.entries().next().value!;
            oldest.close().catch(() => {});
          }
        },
        onsessionclosed: (id) => void sessions.delete(id),
      });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      opts.servers.delete(server);
    };
    opts.servers.add(server);
    await server.connect(transport);
    const protocol = new SessionProtocol();
    protocol.watch(transport);
    protocols.set(transport, protocol);
    return transport;
  };

  const handler = async (request: Request): Promise<Response> => {
    const refused = refusal(request, { allowedHosts, allowedOrigins, token: opts.token });
    if (refused) return refused;
    if (new URL(request.url).pathname !== "/mcp") {
      return new Response("Not found: magi serves MCP at /mcp\n", { status: 404 });
    }
    const id = request.headers.get("mcp-session-id");
    const known = id ? sessions.get(id) : undefined;
    if (id && !known) {
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
        { status: 404 },
      );
    }
    if (known) {
      sessions.delete(id!);
      sessions.set(id!, known); // most recently used last
      return await known.handleRequest(protocols.get(known)?.judged(request) ?? request);
    }
    const transport = await open();
    const response = await transport.handleRequest(request);
    // A request that did not start a session (not an initialize) leaves nothing behind.
    if (!transport.sessionId) await transport.close();
    return response;
  };

  const listener = Deno.serve({
    hostname: HOSTNAME,
    port: opts.port,
    onListen: ({ port }) => {
      allowedHosts = [`${HOSTNAME}:${port}`, `localhost:${port}`, `[::1]:${port}`];
      allowedOrigins = allowedHosts.map((h) => `http://${h}`);
      opts.onListen(`http://${HOSTNAME}:${port}/mcp`);
    },
  }, handler);

  return {
    shutdown: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      await listener.shutdown();
    },
    finished: listener.finished,
  };
}
