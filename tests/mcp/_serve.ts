/**
 * Starting `magi mcp --http` for tests.
 *
 * @module
 */
import { join, resolve } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { magiArgs, REPO, writeConfig } from "../helpers.ts";
import { denoServer } from "./servers.ts";

const imports = JSON.parse(Deno.readTextFileSync(join(REPO, "deno.json"))).imports;

/**
 * The SDK's client, declaring `capabilities`, connected to `magi mcp` on stdio, which reaches
 * `@modelcontextprotocol/server-everything` as MCP server "everything" (its tools allowed for
 * MCP clients). `env` is added to magi's environment, `config` to its config.
 */
export async function everythingClient(
  home: string,
  capabilities: Record<string, unknown>,
  env: Record<string, string> = {},
  config: Record<string, unknown> = {},
): Promise<Client> {
  const file = await writeConfig(home, {
    shipped_tools: false,
    mcp_servers: {
      everything: {
        ...denoServer(imports["@modelcontextprotocol/server-everything"], "stdio"),
        start: "eager",
      },
    },
    policy: { rules: [{ tool: "everything__*", source: "mcp", decision: "allow" }] },
    ...config,
  });
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: magiArgs(["mcp", "--config", file]),
    cwd: home,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      ...env,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "magi-test", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  return client;
}

/** A running `magi mcp --http`. */
export interface HttpServer {
  url: string;
  child: Deno.ChildProcess;
  /** The bearer token (from its file), or undefined with `--no-auth`. */
  token: string | undefined;
  /** `{ authorization: "Bearer …" }`, or `{}` with `--no-auth`. */
  auth: Record<string, string>;
  /** What magi wrote to stderr until now. */
  stderr(): string;
  stop(): Promise<void>;
}

/** Where `magi mcp --http` keeps its token for a test home. */
export function tokenFile(home: string): string {
  return join(home, "state", "magi", "mcp-token");
}

/** Starts `magi mcp --http --port 0` and waits for the URL it prints. */
export async function startHttp(home: string, extra: string[] = []): Promise<HttpServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: magiArgs(["mcp", "--http", "--port", "0", ...extra]),
    cwd: home,
    env: {
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/serving MCP on (\S+)/.test(seen)) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`magi mcp --http ended: ${seen}`);
    seen += value;
  }
  const url = seen.match(/serving MCP on (\S+)/)![1];
  const draining = (async () => {
    while (true) {
      const { value, done } = await lines.read();
      if (done) break;
      seen += value;
    }
  })();
  const noAuth = extra.includes("--no-auth");
  const at = extra.indexOf("--token-file");
  const file = at >= 0 ? resolve(home, extra[at + 1]) : tokenFile(home);
  const token = noAuth ? undefined : Deno.readTextFileSync(file).trim();
  return {
    url,
    child,
    token,
    auth: token ? { authorization: `Bearer ${token}` } : {},
    stderr: () => seen,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await draining.catch(() => {});
    },
  };
}
