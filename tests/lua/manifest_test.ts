import assert from "node:assert/strict";
import { StampCache } from "../../lib/core/stamp_cache.ts";
import { type CachedFile, loadLuaTools } from "../../lib/sources/lua/declarations.ts";
import {
  buildManifest,
  knownShipped,
  SHIPPED_MANIFEST,
} from "../../lib/sources/lua/shipped_manifest.ts";
import { shippedToolsDir } from "../../lib/exec/shipped.ts";

Deno.test("the manifest of the shipped declarations is up to date", async () => {
  const fresh = await buildManifest(shippedToolsDir());
  assert.deepEqual(
    SHIPPED_MANIFEST,
    fresh,
    "tools/*.lua changed: run `deno run -A scripts/lua_manifest.ts` and commit the manifest",
  );
});

Deno.test("a cold start reads the shipped declarations from the manifest, without the engine", async () => {
  const common = {
    dirs: [shippedToolsDir()],
    builtins: [],
    peers: [],
    peerTools: [],
    memoryBytes: 64 * 1024 * 1024,
    warn: (m: string) => assert.fail(m),
  };
  const withManifest = await loadLuaTools({
    ...common,
    cache: new StampCache<CachedFile>(undefined, "test"),
    known: knownShipped(shippedToolsDir()),
  });
  assert.equal(withManifest.engineStarted, false);
  const without = await loadLuaTools({
    ...common,
    cache: new StampCache<CachedFile>(undefined, "test"),
  });
  assert.equal(without.engineStarted, true);
  assert.deepEqual(
    withManifest.tools.map((t) => t.declaration),
    without.tools.map((t) => t.declaration),
  );
});
