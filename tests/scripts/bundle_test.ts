/**
 * magi's bundled build (scripts/bundle.ts, what `deno task install` runs): it passes the
 * smoke test `deno task compile` gives a binary, and it carries every module magi imports
 * late as a chunk of its own (a late import left to the source files would load a second
 * copy of magi's modules, with their own state).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildBundle } from "../../scripts/bundle.ts";
import { RUN_FLAGS } from "../../scripts/permissions.ts";
import { smokeTest } from "../../scripts/smoke.ts";
import { LATE_MODULES } from "../../lib/cli/bundle_entry.ts";
import { DENO_DIR, REPO, tempDir } from "../helpers.ts";

const DENO = Deno.realPathSync(Deno.execPath());

function* tsFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* tsFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

Deno.test("the bundle's entry names every late import of lib/ and every command", () => {
  const late = new Set<string>();
  for (const file of tsFiles(join(REPO, "lib"))) {
    const text = Deno.readTextFileSync(file);
    for (const m of text.matchAll(/lateImport<[^>]*>\(\s*sourceUrl\("([^"]+)"\)/g)) late.add(m[1]);
  }
  const main = Deno.readTextFileSync(join(REPO, "lib", "cli", "main.ts"));
  for (const m of main.matchAll(/\blate<[^>]*>\("\.\/([^"]+)"\)/g)) late.add(`lib/cli/${m[1]}`);
  assert.ok(late.has("lib/cli/tools.ts") && late.has("lib/sources/mcp/sdk.ts"), [...late].join());
  assert.deepEqual([...late].sort(), Object.keys(LATE_MODULES).sort());
});

Deno.test("the bundled build, run from another folder, passes the smoke test", async () => {
  const out = join(REPO, "dist", `test-${crypto.randomUUID().slice(0, 8)}`);
  try {
    const entry = await buildBundle(out);
    const text = Deno.readTextFileSync(entry);
    assert.ok(!/\bimport\("\.\//.test(text), "no literal import() of a chunk is left");
    await using dir = await tempDir();
    const wrapper = join(dir.path, "magi");
    await Deno.writeTextFile(
      wrapper,
      `#!/bin/sh\nDENO_DIR='${DENO_DIR}' exec '${DENO}' run ${RUN_FLAGS.join(" ")} --quiet ` +
        `--config '${join(REPO, "deno.json")}' '${entry}' "$@"\n`,
      { mode: 0o755 },
    );
    assert.deepEqual(await smokeTest(wrapper), []);
  } finally {
    await Deno.remove(out, { recursive: true }).catch(() => {});
  }
});

Deno.test("a bundle outside dist/'s depth is refused with one line", async () => {
  await assert.rejects(
    () => buildBundle(join(REPO, "dist", "a", "b")),
    /^Error: Cannot bundle into ".*": it must lie two folders below /,
  );
});
