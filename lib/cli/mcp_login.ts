/**
 * `magi mcp login NAME`: the OAuth 2.1 login for the remote MCP server NAME (config
 * `mcp_servers`), through the SDK's client auth: discovery, client registration, PKCE. The
 * authorization URL goes to stderr for the person to open; the server's redirect comes back
 * to a one-shot HTTP listener on 127.0.0.1 that takes only the redirect carrying this login's
 * random `state` (lib/cli/mcp_login_callback.ts). The tokens are kept 0600 (lib/registry/mcp_oauth.ts)
 * and used, and refreshed, by every later start.
 *
 * @module
 */
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { loadConfig } from "../config/load.ts";
import { cacheKey, expandSpec, type McpServerSpec } from "../registry/mcp.ts";
import { StoredOAuth } from "../registry/mcp_oauth.ts";
import { stateDir } from "../runtime.ts";
import { VERSION } from "../version.ts";
import { EXIT, UsageError, warn } from "./common.ts";
import { listenForLogin } from "./mcp_login_callback.ts";

/** How long the login waits for the browser's redirect, in milliseconds. */
const LOGIN_WAIT_MS = 5 * 60 * 1000;

/** Runs `magi mcp login NAME`. @throws UsageError for a name that is no URL server */
export async function mcpLogin(name: string, configFlag: string | undefined): Promise<number> {
  const env = Deno.env.toObject();
  const config = loadConfig({ cwd: Deno.cwd(), env, configFlag });
  const servers = (config.values.mcp_servers ?? {}) as Record<string, McpServerSpec>;
  const raw = servers[name];
  if (!raw) {
    const known = Object.keys(servers).join(", ") || "none";
    throw new UsageError(`no MCP server "${name}" in the config (configured: ${known})`);
  }
  if (!raw.url) throw new UsageError(`MCP server "${name}" is a program, not a URL: no login`);
  const spec = expandSpec(raw, env, () => {});
  const file = StoredOAuth.fileFor(join(stateDir(env), "mcp-oauth"), cacheKey(name, raw));

  const listener = listenForLogin();
  const auth = new StoredOAuth(name, file, {
    open: (url) => {
      warn(`to log in to MCP server "${name}", open this URL in your browser:\n${url.href}`);
    },
    redirect: listener.redirect,
    state: listener.state,
    client: spec.oauth,
  });
  const connect = async () => {
    const client = new Client({ name: "magi", version: VERSION });
    const transport = new StreamableHTTPClientTransport(new URL(spec.url!), {
      requestInit: { headers: spec.headers ?? {} },
      authProvider: auth,
    });
    await client.connect(transport);
    return { client, transport };
  };
  try {
    try {
      const { client } = await connect();
      await client.close();
      warn(`MCP server "${name}": already logged in (tokens in ${file})`);
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("no login within 5 minutes")), LOGIN_WAIT_MS);
    });
    const got = await Promise.race([listener.code, late]).finally(() => clearTimeout(timer));
    const pending = new StreamableHTTPClientTransport(new URL(spec.url!), {
      requestInit: { headers: spec.headers ?? {} },
      authProvider: auth,
    });
    await pending.finishAuth(got);
    const { client } = await connect();
    const { tools } = await client.listTools().catch(() => ({ tools: [] }));
    await client.close();
    warn(`logged in to MCP server "${name}" (${tools.length} tools); tokens in ${file} (0600)`);
    return EXIT.ok;
  } finally {
    await listener.close();
  }
}
