/**
 * Starting `magi mcp --http` for tests.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { magiArgs } from "../helpers.ts";

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
