/**
 * `magi mcp [--http [--port N] [--token-file F | --no-auth]]`: serves the registry over MCP —
 * on stdio by default, or as Streamable HTTP on 127.0.0.1 — until the client goes away (stdin
 * ends) or magi is stopped. Over HTTP every request must carry the bearer token kept in
 * `$XDG_STATE_HOME/magi/mcp-token` (generated and shown once when missing), unless
 * `--no-auth`. Tool changes in tools_dir and the Lua/config files are announced to clients.
 *
 * @module
 */
import { join } from "node:path";
import { MCP_OPTIONS } from "./options.ts";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { serveHttp } from "../mcp/http.ts";
import { lateImport } from "../core/lazy_require.ts";
import { sourceUrl } from "../core/source_root.ts";
import { createMcpServer } from "../mcp/server.ts";
import { guardedInput } from "../mcp/stdio_guard.ts";
import { loadOrCreateToken, type McpToken, TOKEN_SECRET_NAME } from "../mcp/token.ts";
import { watchPlan, watchSources } from "../mcp/watch.ts";
import {
  closeMcpServers,
  closeUnusedMcpServers,
  onMcpLog,
  onMcpToolsChanged,
} from "../sources/mcp/client.ts";
import type { Secret } from "../pipeline/mask.ts";
import { type Runtime, stateDir } from "../runtime/runtime.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, warn } from "./common.ts";

/** Runs `magi mcp`. */
export async function mcpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, MCP_OPTIONS);
  if (positionals[0] === "login") {
    if (positionals.length !== 2) throw new UsageError("usage: magi mcp login NAME");
    // The SDK's client and auth load only for a login.
    const { mcpLogin } = await lateImport<typeof import("./mcp_login.ts")>(
      sourceUrl("lib/cli/mcp_login.ts"),
    );
    return await mcpLogin(positionals[1], values.config);
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `magi mcp takes no arguments but "login NAME"; got ${JSON.stringify(positionals)}`,
    );
  }
  if (values.port !== undefined && !values.http) {
    throw new UsageError("--port needs --http");
  }
  for (const flag of ["no-auth", "token-file"] as const) {
    if (values[flag] !== undefined && !values.http) throw new UsageError(`--${flag} needs --http`);
  }
  if (values["no-auth"] && values["token-file"] !== undefined) {
    throw new UsageError("--no-auth and --token-file exclude each other");
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port: expected a TCP port number, got "${values.port}"`);
  }
  const token = !values.http || values["no-auth"]
    ? undefined
    : values["token-file"] !== undefined
    ? loadOrCreateToken(values["token-file"], false)
    : loadOrCreateToken(join(stateDir(Deno.env.toObject()), "mcp-token"));
  // The token is a secret like any credential: masked wherever a result or log could show it.
  const secrets: Secret[] = token ? [{ name: TOKEN_SECRET_NAME, value: token.token }] : [];

  let rt: Runtime = await runtimeFor(values, { calls: true, secrets });
  const servers = new Set<Server>();
  let stopWatching = () => {};
  const rewatch = () => {
    stopWatching();
    stopWatching = watchSources(watchPlan(rt), reload);
  };
  let reloading = Promise.resolve();
  function reload(): void {
    reloading = reloading.then(async () => {
      try {
        const next = await runtimeFor(values, { calls: true, secrets });
        next.session = rt.session;
        rt = next;
      } catch (error) {
        warn(`tools not reloaded: ${(error as Error).message}`);
        return;
      }
      rewatch();
      await closeUnusedMcpServers();
      for (const server of servers) await server.sendToolListChanged().catch(() => {});
    });
  }
  rewatch();
  // An upstream server's tools changed (it became ready, or said so): the runtime's registry
  // already holds them; only the clients are told.
  const stopFollowing = onMcpToolsChanged(() => {
    for (const server of servers) server.sendToolListChanged().catch(() => {});
  });
  // Upstream servers' log messages go on to the clients (each at the level it set).
  const stopLogs = onMcpLog((name, level, data) => {
    for (const server of servers) {
      server.sendLoggingMessage({ level: level as "info", logger: name, data }).catch(() => {});
    }
  });

  try {
    if (values.http) {
      const serving = serveHttp(() => rt, {
        port,
        servers,
        token: token?.token,
        onListen: (url) => {
          if (token) tellToken(token);
          else warn("no authentication (--no-auth): any local process can call the tools");
          warn(`serving MCP on ${url}`);
        },
      });
      const stop = () => void serving.shutdown();
      Deno.addSignalListener("SIGINT", stop);
      Deno.addSignalListener("SIGTERM", stop);
      await serving.finished;
      Deno.removeSignalListener("SIGINT", stop);
      Deno.removeSignalListener("SIGTERM", stop);
    } else {
      const server = createMcpServer(() => rt);
      servers.add(server);
      // The SDK reports a transport fault here; without a handler the session could end with
      // nothing said. Lines over the cap and lines that are no JSON are answered by the guard.
      server.onerror = (error) => warn(`mcp: ${error.message}`);
      const ended = new Promise<void>((resolve) => {
        server.onclose = () => resolve();
        process.stdin.once("end", () => resolve());
        process.stdin.once("close", () => resolve());
      });
      // A malformed request is answered (the SDK would drop it unanswered), and a message over
      // the cap too, without holding it whole: stdio_guard.ts.
      const cap = rt.config.values["limits.mcp_message_bytes"];
      const input = guardedInput(
        process.stdin,
        (reply) => void process.stdout.write(JSON.stringify(reply) + "\n"),
        cap,
      );
      // The guard passes whole lines of at most `cap` bytes: the SDK's buffer never fills.
      const maxBufferSize = 2 * cap + 1024;
      await server.connect(new StdioServerTransport(input, process.stdout, { maxBufferSize }));
      await ended;
      await server.close().catch(() => {});
    }
  } finally {
    stopFollowing();
    stopLogs();
    stopWatching();
    await closeMcpServers();
  }
  return EXIT.ok;
}

/**
 * Says on stderr how clients authenticate. A token generated now is shown this once — the
 * one place magi writes it unmasked, straight to stderr — later starts only say where it is.
 */
function tellToken(token: McpToken): void {
  if (!token.generated) {
    warn(
      `MCP clients must send "Authorization: Bearer <token>" with the token in ${token.path}`,
    );
    return;
  }
  const text = `magi: generated an MCP bearer token, stored in ${token.path} (mode 0600); ` +
    `it is shown only this once.\nmagi: MCP clients must send this header:\n` +
    `Authorization: Bearer ${token.token}\n`;
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(text));
  } catch {
    // stderr went away; the token is still in its file.
  }
}
