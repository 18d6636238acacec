/**
 * Starting `magi mcp --http` for tests.
 *
 * @module
 */
import { join } from "node:path";
import { magiArgs } from "../helpers.ts";

/** Starts `magi mcp --http --port 0` and waits for the URL it prints. */
export async function startHttp(
  home: string,
  extra: string[] = [],
): Promise<{ url: string; child: Deno.ChildProcess; stop(): Promise<void> }> {
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
    while (!(await lines.read()).done) { /* keep stderr flowing */ }
  })();
  return {
    url,
    child,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await draining.catch(() => {});
    },
  };
}
