/**
 * `magi mcp [--http [--port N]]`: serves the registry over MCP — on stdio by default, or as
 * Streamable HTTP on 127.0.0.1 — until the client goes away (stdin ends) or magi is stopped.
 * Tool changes in tools_dir and the Lua/config files are announced to clients.
 *
 * @module
 */
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { serveHttp } from "../mcp/http.ts";
import { createMcpServer } from "../mcp/server.ts";
import { guardedInput } from "../mcp/stdio_guard.ts";
import { watchPlan, watchSources } from "../mcp/watch.ts";
import { closeMcpServers, closeUnusedMcpServers, onMcpToolsChanged } from "../registry/mcp.ts";
import type { Runtime } from "../runtime.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, warn } from "./common.ts";

/** Runs `magi mcp`. */
export async function mcpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    http: { type: "boolean" },
    port: { type: "string" },
    sandbox: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`magi mcp takes no arguments; got ${JSON.stringify(positionals)}`);
  }
  if (values.port !== undefined && !values.http) {
    throw new UsageError("--port needs --http");
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port: expected a TCP port number, got "${values.port}"`);
  }

  let rt: Runtime = await runtimeFor(values, { calls: true });
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
        const next = await runtimeFor(values, { calls: true });
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
  const stopFollowing = onMcpToolsChanged(reload);

  try {
    if (values.http) {
      const serving = serveHttp(() => rt, {
        port,
        servers,
        onListen: (url) => warn(`serving MCP on ${url}`),
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
      // The SDK reports a transport fault (a message over its 10 MiB buffer, a line that is no
      // JSON) here; without a handler the session could end with nothing said.
      server.onerror = (error) => warn(`mcp: ${error.message}`);
      const ended = new Promise<void>((resolve) => {
        server.onclose = () => resolve();
        process.stdin.once("end", () => resolve());
        process.stdin.once("close", () => resolve());
      });
      // A malformed request is answered (the SDK would drop it unanswered): stdio_guard.ts.
      const input = guardedInput(
        process.stdin,
        (reply) => void process.stdout.write(JSON.stringify(reply) + "\n"),
      );
      await server.connect(new StdioServerTransport(input));
      await ended;
      await server.close().catch(() => {});
    }
  } finally {
    stopFollowing();
    stopWatching();
    await closeMcpServers();
  }
  return EXIT.ok;
}
