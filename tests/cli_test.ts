import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, REPO, tempDir } from "./helpers.ts";

Deno.test("magi tools --json shows wc-lines with exactly the seed's fields", async () => {
  const run = await magi(["tools", "--json", "--tools-dir", "tools"]);
  assert.equal(run.code, 0, run.stderr);
  const tools = JSON.parse(run.stdout);
  const wc = tools.find((t: { name: string }) => t.name === "wc-lines");
  const seed = JSON.parse(await Deno.readTextFile(join(REPO, "tools/wc-lines/schema.json")));
  delete seed["x-snens"];
  assert.deepEqual(wc, {
    name: "wc-lines",
    description: "wc-lines — сколько строк в файле.\nwc-lines <путь> [--no-empty]",
    parameters: seed,
  });
  assert.ok(!run.stdout.includes("x-snens"));
});

Deno.test("magi call wc-lines prints what the seed's script prints", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "README.md"), "one\n\n  \nfour\n");
  const run = await magi(["call", "wc-lines", '{"path":"README.md","no_empty":true}'], {
    cwd: dir.path,
  });
  const direct = await new Deno.Command(join(REPO, "tools/wc-lines/wc-lines"), {
    args: ["README.md", "--no-empty"],
    cwd: dir.path,
  }).output();
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, new TextDecoder().decode(direct.stdout));
  assert.equal(run.stdout, "README.md: 2\n");
});
