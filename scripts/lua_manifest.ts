/**
 * Writes `lib/sources/lua/shipped_manifest.json`: what each `*.lua` file shipped in `tools/`
 * declares, so a cold start reads them without the Lua engine. Run it after changing one:
 * `deno run -A scripts/lua_manifest.ts`.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { buildManifest } from "../lib/sources/lua/shipped_manifest.ts";
import { shippedToolsDir } from "../lib/exec/shipped.ts";

const out = fileURLToPath(new URL("../lib/sources/lua/shipped_manifest.json", import.meta.url));
const manifest = await buildManifest(shippedToolsDir());
await Deno.writeTextFile(out, JSON.stringify(manifest, null, 2) + "\n");
console.log(`${out}: ${Object.keys(manifest).join(", ")}`);
