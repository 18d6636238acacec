/**
 * The tool-links folder's `magi`: a tool can run `magi builtin NAME …` even where no `magi` is
 * installed, and a system `magi` on PATH is never shadowed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

/** A PATH folder holding only `sh` (no `magi`, no `read` program). */
async function bareBin(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  const found = new Deno.Command("sh", { args: ["-c", "command -v sh"] }).outputSync();
  await Deno.symlink(new TextDecoder().decode(found.stdout).trim(), join(bin, "sh"));
  return bin;
}

Deno.test("a tool's `magi builtin read FILE` works where no magi is installed", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  await makeTool(
    tools,
    "reader",
    '#!/bin/sh\n[ "$1" = "--help" ] && { echo "Reads notes.txt with magi\'s read"; echo "Usage: reader"; exit 0; }\n' +
      "exec magi builtin read notes.txt\n",
  );
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await Deno.writeTextFile(join(work, "notes.txt"), "first\nsecond\n");
  const bin = await bareBin(dir.path);
  await using t = await builtinRuntime(work, {}, { toolsDirs: [tools], env: { PATH: bin } });
  const r = await call(t.rt, "reader", { timeout_seconds: 60 });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "1\tfirst\n2\tsecond\n");
});

Deno.test("a magi on the system PATH gets no shim in the tool-links folder", async () => {
  await using dir = await tempDir();
  const bin = await bareBin(dir.path);
  await Deno.writeTextFile(join(bin, "magi"), "#!/bin/sh\necho system magi\n", { mode: 0o755 });
  await using t = await builtinRuntime(dir.path, {}, { env: { PATH: bin } });
  const links = [...Deno.readDirSync(t.rt.linksDir!)].map((e) => e.name);
  assert.ok(!links.includes("magi"), links.join(" "));
});
