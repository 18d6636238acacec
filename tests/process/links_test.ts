import assert from "node:assert/strict";
import { join } from "node:path";
import { prepareLinks } from "../../lib/exec/links.ts";
import { tempDir } from "../helpers.ts";

Deno.test("the tool-links folder leaves out a name the system PATH has, also once a warm start remembers it", async () => {
  await using dir = await tempDir();
  const base = join(dir.path, "links");
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  const entries = [
    { name: "mytool", target: "/bin/true" },
    { name: "other", script: "#!/bin/sh\necho other\n" },
  ];
  const names = (folder: string) => [...Deno.readDirSync(folder)].map((e) => e.name).sort();
  const first = await prepareLinks(base, entries, bin);
  assert.deepEqual(names(first), ["mytool", "other"]);
  assert.equal(await prepareLinks(base, entries, bin), first);
  // A program of that name arrives on the system PATH: the link must go, not be remembered.
  await Deno.writeTextFile(join(bin, "mytool"), "#!/bin/sh\n", { mode: 0o755 });
  const after = await prepareLinks(base, entries, bin);
  assert.notEqual(after, first);
  assert.deepEqual(names(after), ["other"]);
});
