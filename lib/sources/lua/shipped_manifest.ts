/**
 * The declarations of the `*.lua` files shipped in `tools/`, recorded ahead of time
 * (`shipped_manifest.json`, written by `scripts/lua_manifest.ts`) so that even a start with an
 * empty cache reads them without starting the Lua engine. An entry is used only while the
 * file's SHA-256 matches; a test fails when the manifest is out of date.
 *
 * @module
 */
import { join } from "node:path";
import { StampCache } from "../../core/stamp_cache.ts";
import { type CachedFile, type KnownFile, loadLuaTools, luaFiles, sha256 } from "./declarations.ts";
import manifest from "./shipped_manifest.json" with { type: "json" };

/** File name → its SHA-256 and declarations. */
export type Manifest = Record<string, KnownFile>;

/** The manifest of the shipped declarations. */
export const SHIPPED_MANIFEST: Manifest = manifest as unknown as Manifest;

/** The manifest's entries by absolute path inside `dir` (the shipped tools folder). */
export function knownShipped(dir: string): Map<string, KnownFile> {
  return new Map(Object.entries(SHIPPED_MANIFEST).map(([name, entry]) => [join(dir, name), entry]));
}

/**
 * Loads every `*.lua` file of `dir` in an engine and records what each declares, with its
 * schema checks, as the manifest holds it.
 */
export async function buildManifest(dir: string): Promise<Manifest> {
  const cache = new StampCache<CachedFile>(undefined, "manifest");
  await loadLuaTools({
    dirs: [dir],
    builtins: [],
    peers: [],
    peerTools: [],
    memoryBytes: 64 * 1024 * 1024,
    cache,
    warn: () => {},
  });
  const out: Manifest = {};
  for (const path of luaFiles([dir])) {
    const file = cache.peek(path);
    if (!file) continue;
    const name = path.slice(dir.length + 1);
    out[name] = { sha256: await sha256(await Deno.readTextFile(path)), file };
  }
  return out;
}
