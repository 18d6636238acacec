import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

Deno.test("write creates missing folders and says one short line", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "write", { path: "new/deep/a.ts", content: "one\ntwo\n" });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "wrote 2 lines to new/deep/a.ts (new file)\n");
  assert.equal(await Deno.readTextFile(join(dir.path, "new/deep/a.ts")), "one\ntwo\n");
  assert.match(
    r.shown,
    /^wrote 2 lines.*\n--- \/dev\/null\n\+\+\+ new\/deep\/a.ts\n@@ -0,0 \+1,2 @@\n\+one\n\+two\n$/,
  );
});

Deno.test("write replaces a file atomically, keeps its mode and shows a diff", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "run.sh");
  await Deno.writeTextFile(path, "#!/bin/sh\necho old\n");
  await Deno.chmod(path, 0o750);
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "write", { path: "run.sh", content: "#!/bin/sh\necho new\n" });
  assert.equal(r.said, "wrote 2 lines to run.sh\n");
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o750);
  assert.ok(r.shown.includes("-echo old\n+echo new\n"), r.shown);
  const left = [...Deno.readDirSync(dir.path)].map((e) => e.name);
  assert.deepEqual(left, ["run.sh"]);
});

Deno.test("write through a symlink replaces the target and keeps the link", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "target.txt"), "old\n");
  await Deno.symlink("target.txt", join(dir.path, "link.txt"));
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "write", { path: "link.txt", content: "new\n" });
  assert.equal(r.is_error, false, r.said);
  assert.equal((await Deno.lstat(join(dir.path, "link.txt"))).isSymlink, true);
  assert.equal(await Deno.readTextFile(join(dir.path, "target.txt")), "new\n");
});

Deno.test("write refuses to replace a device, pipe or socket", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, "pipe");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success);
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "write", { path: "pipe", content: "x" });
  assert.equal(r.is_error, true);
  assert.match(r.said, /^Cannot write "pipe": not a regular file/);
  assert.ok((await Deno.lstat(fifo)).isFifo, "the pipe is still a pipe");
});

Deno.test("write takes a file name close to the 255-byte limit", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  const name = "n".repeat(250);
  const r = await call(t.rt, "write", { path: name, content: "x\n" });
  assert.equal(r.is_error, false, r.said);
  assert.equal(await Deno.readTextFile(join(dir.path, name)), "x\n");
});

Deno.test("write and edit over limits.write_bytes are error results naming the limit; the file stays", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "a.txt");
  await Deno.writeTextFile(path, "old\n");
  await using t = await builtinRuntime(dir.path, { limits: { write_bytes: 1024 } });
  const big = await call(t.rt, "write", { path: "a.txt", content: "x".repeat(1025) });
  assert.equal(big.is_error, true);
  assert.equal(
    big.said,
    'Cannot write "a.txt": the content is more than 1024 bytes, over the limit of 1024 bytes ' +
      "(config key `limits.write_bytes`)\n",
  );
  // Counted in UTF-8 bytes: 400 three-byte characters are 1200 bytes.
  const wide = await call(t.rt, "write", { path: "a.txt", content: "\u20ac".repeat(400) });
  assert.match(wide.said, /^Cannot write "a.txt": the content is 1200 bytes, over the limit/);
  const edit = await call(t.rt, "edit", {
    path: "a.txt",
    old_string: "old",
    new_string: "y".repeat(2000),
  });
  assert.match(edit.said, /^Cannot edit "a.txt": .*over the limit of 1024 bytes/);
  // replace_all: a short new_string times many matches.
  await Deno.writeTextFile(path, "o\n".repeat(600));
  const all = await call(t.rt, "edit", {
    path: "a.txt",
    old_string: "o",
    new_string: "ooo",
    replace_all: true,
  });
  assert.equal(
    all.said,
    'Cannot edit "a.txt": the replacements add 1800 bytes, over the limit of 1024 bytes ' +
      "(config key `limits.write_bytes`)\n",
  );
  assert.equal(await Deno.readTextFile(path), "o\n".repeat(600));
  // magi goes on: a write under the limit works.
  const ok = await call(t.rt, "write", { path: "a.txt", content: "new\n" });
  assert.equal(ok.is_error, false, ok.said);
  assert.equal(await Deno.readTextFile(path), "new\n");
});

Deno.test("the default write cap refuses 64 MiB + 1 without running out of memory", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "a.txt"), "old\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "write", { path: "a.txt", content: "x".repeat(64 * 1024 * 1024 + 1) });
  assert.equal(r.is_error, true);
  assert.match(r.said, /over the limit of 33554432 bytes \(config key `limits.write_bytes`\)/);
  assert.equal(await Deno.readTextFile(join(dir.path, "a.txt")), "old\n");
});
