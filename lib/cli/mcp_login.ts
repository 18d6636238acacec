/**
 * `magi mcp login NAME`: the OAuth 2.1 login for the remote MCP server NAME (config
 * `mcp_servers`), through the SDK's client auth: discovery, client registration, PKCE. The
 * authorization URL goes to stderr for the person to open; the server's redirect comes back
 * to a one-shot HTTP listener on 127.0.0.1 that takes only the redirect carrying this login's
 * random `state` (lib/cli/mcp_login_callback.ts). The tokens are kept 0600
 * (lib/sources/mcp/oauth.ts)
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
import { auth as sdkAuth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { loadConfig } from "../config/load.ts";
import { cacheKey, expandSpec } from "../sources/mcp/client.ts";
import { StoredOAuth } from "../sources/mcp/oauth.ts";
import { stateDir } from "../runtime/runtime.ts";
import { VERSION } from "../core/version.ts";
import { EXIT, UsageError, warn } from "./common.ts";
import { listenForLogin } from "./mcp_login_callback.ts";

/** How long the login waits for the browser's redirect, in milliseconds. */
const LOGIN_WAIT_MS = 5 * 60 * 1000;

/**
 * The most authorizations one `magi mcp login` asks of the browser: a server that answers each
 * with 403 `insufficient_scope` again is not sent there in a loop.
 */
export const MAX_LOGINS = 3;

/** Runs `magi mcp login NAME`. @throws UsageError for a name that is no URL server */
export async function mcpLogin(name: string, configFlag: string | undefined): Promise<number> {
  const env = Deno.env.toObject();
  const config = loadConfig({ cwd: Deno.cwd(), env, configFlag });
  const servers = config.values.mcp_servers;
  const raw = servers[name];
  if (!raw) {
    const known = Object.keys(servers).join(", ") || "none";
    throw new UsageError(`no MCP server "${name}" in the config (configured: ${known})`);
  }
  if (!raw.url) throw new UsageError(`MCP server "${name}" is a program, not a URL: no login`);
  const spec = expandSpec(raw, env, () => {});
  const file = StoredOAuth.fileFor(join(stateDir(env), "mcp-oauth"), cacheKey(name, raw));

  const listener = listenForLogin();
  let opened = 0;
  const auth = new StoredOAuth(name, file, {
    open: (url) => {
      // A server that keeps asking for more access is not sent to the browser forever.
      if (++opened > MAX_LOGINS) {
        throw new Error(
          `the server still asks for more access after ${MAX_LOGINS} logins` +
            (url.searchParams.get("scope") ? ` (scope "${url.searchParams.get("scope")}")` : ""),
        );
      }
      warn(`to log in to MCP server "${name}", open this URL in your browser:\n${url.href}`);
    },
    redirect: listener.redirect,
    state: () => listener.state,
    client: spec.oauth,
    resource: spec.url,
  });
  const transport = () =>
    new StreamableHTTPClientTransport(new URL(spec.url!), {
      requestInit: { headers: spec.headers ?? {} },
      authProvider: auth,
      fetch: auth.watching(),
    });
  /** The browser's redirect, within the time a person takes. */
  const redirected = async (): Promise<string> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("no login within 5 minutes")), LOGIN_WAIT_MS);
    });
    return await Promise.race([listener.code, late]).finally(() => clearTimeout(timer));
  };
  try {
    for (let round = 0;; round++) {
      // A call was refused for want of scope: ask for it, the old tokens set aside (a refresh
      // never adds scope).
      const wanted = auth.wantedScope();
      // Bounded without a browser too (a machine client's tokens come at once).
      if (round > MAX_LOGINS) {
        throw new Error(
          `the server still refuses after ${MAX_LOGINS} logins` +
            (wanted ? ` (it asks for scope "${wanted}")` : ""),
        );
      }
      if (wanted) await stepUp(auth, spec.url!, wanted, redirected, listener.again);
      const t = transport();
      const client = new Client({ name: "magi", version: VERSION });
      try {
        // Connecting may need no token (initialize is open on some servers): listing does.
        await client.connect(t);
        const tools = client.getServerCapabilities()?.tools
          ? (await client.listTools()).tools.length
          : 0;
        await client.close();
        if (round === 0 && !wanted) {
          warn(`MCP server "${name}": already logged in (tokens in ${file})`);
        } else {
          warn(`logged in to MCP server "${name}" (${tools} tools); tokens in ${file} (0600)`);
        }
        return EXIT.ok;
      } catch (error) {
        await client.close().catch(() => {});
        // Refused for want of scope (noted by the fetch): the next round asks for it.
        if (!(error instanceof UnauthorizedError) && auth.wantedScope()) continue;
        if (!(error instanceof UnauthorizedError)) throw error;
      }
      // The authorization URL is out (a first login, or more scope): finish with its code.
      await t.finishAuth(await redirected());
      listener.again();
    }
  } finally {
    await listener.close();
  }
}

/**
 * Logs in again for `scope` (a request was refused for want of it): the tokens set aside so
 * the SDK does not merely refresh them, put back if the login fails.
 */
async function stepUp(
  auth: StoredOAuth,
  url: string,
  scope: string,
  redirected: () => Promise<string>,
  again: () => void,
): Promise<void> {
  const had = auth.tokens();
  auth.invalidateCredentials("tokens");
  try {
    const serverUrl = new URL(url);
    const fetchFn = auth.watching();
    if (await sdkAuth(auth, { serverUrl, scope, fetchFn }) === "REDIRECT") {
      await sdkAuth(auth, { serverUrl, scope, authorizationCode: await redirected(), fetchFn });
      again();
    }
    auth.gotWantedScope();
  } catch (error) {
    if (had) auth.saveTokens(had);
    throw error;
  }
}
