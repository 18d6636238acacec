/**
 * MCP servers the tests start: a Deno script run with this checkout's config, as an entry of
 * config `mcp_servers` (`{command, args}`).
 *
 * @module
 */
import { join } from "node:path";
import { REPO, TESTDATA } from "../helpers.ts";

/** A server entry that runs `deno run -A` with this checkout's deno.json and `args`. */
export function denoServer(...args: string[]): { command: string; args: string[] } {
  return {
    command: Deno.execPath(),
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), ...args],
  };
}

/** The fixture server (`tests/testdata/mcp/fixture_server.ts`). */
export const FIXTURE = denoServer(join(TESTDATA, "mcp", "fixture_server.ts"));
