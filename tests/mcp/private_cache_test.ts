/**
 * What magi keeps of MCP servers is private and masked: the tool-list cache (0600 in a 0700
 * folder, written atomically, masked, keyed by a hash) and binary content spilled from
 * results (0600, pruned after a week); a credential in a server's config `env` is masked.
 */
import { FIXTURE } from "./servers.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Masker } from "../../lib/pipeline/mask.ts";
import { SPILL_KEEP_MS } from "../../lib/pipeline/spill.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeMcpServers } from "../../lib/sources/mcp/client.ts";
import { spillBytes } from "../../lib/sources/mcp/content.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const LITERAL = "literal-api-key-0123456789";

Deno.test("the MCP tool-list cache is masked, private, and keeps no config values", async () => {
  await using home = await tempDir();
  const cacheDir = join(home.path, "cache", "magi");
  // An older magi left the folder open to others: it is closed again.
  Deno.mkdirSync(cacheDir, { recursive: true });
  Deno.chmodSync(cacheDir, 0o755);
  await using tr = await testRuntime({
    config: {
      shipped_tools: false,
      mcp_servers: { fixture: { ...FIXTURE, env: { FIXTURE_API_KEY: LITERAL } } },
    },
    env: { XDG_CACHE_HOME: join(home.path, "cache") },
  });
  try {
    const path = join(cacheDir, "mcp-tools.json");
    const text = Deno.readTextFileSync(path);
    assert.ok(!text.includes(LITERAL), "the literal key is in the cache");
    assert.match(text, /\(key \$FIXTURE_API_KEY\)/);
    assert.deepEqual(Object.keys(JSON.parse(text)).map((k) => /^[0-9a-f]{64}$/.test(k)), [true]);
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(cacheDir).mode! & 0o777, 0o700);
    assert.deepEqual([...Deno.readDirSync(cacheDir)].filter((e) => e.name.endsWith(".tmp")), []);

    // The literal in the server's `env` is a credential by its name: masked in results too.
    const echoed = await runTool(tr.rt, {
      caller: "person",
      name: "fixture__env",
      args: { name: "FIXTURE_API_KEY" },
    });
    assert.equal(echoed.said.trim(), "value: $FIXTURE_API_KEY");
    const described = tr.rt.registry.get("fixture__pid")!.declaration.description;
    assert.ok(!described.includes(LITERAL), described);
  } finally {
    await closeMcpServers();
  }
});

Deno.test("binary MCP content spills are 0600 and pruned after a week", async () => {
  await using home = await tempDir();
  const dir = join(home.path, "spill");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.chmodSync(dir, 0o755);
  const old = join(dir, "2020-01-01T00-00-00-000Z-srv__shot-0123abcd.png");
  const other = join(dir, "notes.png");
  for (const file of [old, other]) {
    Deno.writeFileSync(file, new Uint8Array([1]));
    const past = new Date(Date.now() - SPILL_KEEP_MS - 60_000);
    Deno.utimeSync(file, past, past);
  }
  const masker = new Masker([{ name: "TOKEN", value: "secret-bytes-42" }]);
  const path = await spillBytes(
    { spillDir: dir, masker, label: "srv__shot" },
    new TextEncoder().encode("a secret-bytes-42 b"),
    "image/png",
  );
  assert.ok(path);
  assert.equal(Deno.readTextFileSync(path), "a $TOKEN b");
  assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.throws(() => Deno.statSync(old), Deno.errors.NotFound);
  assert.ok(Deno.statSync(other).isFile, "a file magi did not name is kept");
});
