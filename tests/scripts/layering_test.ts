import assert from "node:assert/strict";
import { join } from "node:path";
import {
  againstOrder,
  circles,
  importGraph,
  outsideFolders,
} from "../../scripts/check_layering.ts";

const SCRIPT = new URL("../../scripts/check_layering.ts", import.meta.url).pathname;

async function write(root: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
}

Deno.test("layering: an import against the order, a circle and a loose module are each reported", async () => {
  const root = await Deno.makeTempDir();
  try {
    await write(root, {
      "lib/core/a.ts": 'import { b } from "../policy/b.ts";\nexport const a = b;\n',
      "lib/policy/b.ts": 'import type { C } from "./c.ts";\nexport const b = 1 as C;\n',
      "lib/policy/c.ts": 'import { b } from "./b.ts";\nexport type C = typeof b;\n',
      "lib/cli/d.ts": 'const m = new URL("../exec/e.ts", import.meta.url);\nexport const d = m;\n',
      "lib/exec/e.ts": 'export const e = new URL("../cli/d.ts", import.meta.url);\n',
      "lib/stray.ts": "export const s = 1;\n",
    });
    const graph = importGraph(root);
    assert.deepEqual(againstOrder(graph), [
      "lib/core/a.ts → lib/policy/b.ts",
      "lib/exec/e.ts → lib/cli/d.ts",
    ]);
    assert.deepEqual(circles(graph).map((c) => c.join(" ")).sort(), [
      "lib/cli/d.ts lib/exec/e.ts",
      "lib/policy/b.ts lib/policy/c.ts",
    ]);
    assert.deepEqual(outsideFolders(graph), ["lib/stray.ts"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("layering: magi's own lib/ has no circle and no import against the order", async () => {
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", SCRIPT] }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /0 circle\(s\)/);
  assert.match(text, /0 import\(s\) against the order/);
  assert.equal(out.code, 0, text);
});
