import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";
import { sparseLog } from "../../scripts/bench_memory.ts";
import { builtinRuntime, call } from "./helpers.ts";

Deno.test("read numbers lines, honours offset and limit, and says how to go on", async () => {
  await using dir = await tempDir();
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  await Deno.writeTextFile(join(dir.path, "a.txt"), lines);
  await using t = await builtinRuntime(dir.path);
  const all = await call(t.rt, "read", { path: "a.txt" });
  assert.equal(all.is_error, false);
  assert.equal(
    all.said,
    lines.split("\n").slice(0, 10).map((l, i) => `${i + 1}\t${l}`).join("\n") + "\n",
  );
  const part = await call(t.rt, "read", { path: "a.txt", offset: 4, limit: 2 });
  assert.equal(part.said, "4\tline 4\n5\tline 5\n(more lines follow: read with offset 6)\n");
  const past = await call(t.rt, "read", { path: "a.txt", offset: 20 });
  assert.equal(past.said, "(no line 20: the file has 10 lines)\n");
});

Deno.test("read shows CRLF, BOM, UTF-16 and invalid UTF-8 files as text", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "crlf.txt"), "\ufeffone\r\ntwo\r\n");
  const utf16 = new Uint8Array([
    0xff,
    0xfe,
    ...[..."hé\nyo\n"].flatMap((c) => [c.charCodeAt(0), 0]),
  ]);
  await Deno.writeFile(join(dir.path, "u16.txt"), utf16);
  await Deno.writeFile(
    join(dir.path, "latin1.txt"),
    new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  );
  await using t = await builtinRuntime(dir.path);
  assert.equal((await call(t.rt, "read", { path: "crlf.txt" })).said, "1\tone\n2\ttwo\n");
  assert.equal((await call(t.rt, "read", { path: "u16.txt" })).said, "1\thé\n2\tyo\n");
  const latin = await call(t.rt, "read", { path: "latin1.txt" });
  assert.equal(latin.is_error, false);
  assert.equal(latin.said, "1\tcaf\ufffd\n(invalid UTF-8 bytes are shown as \ufffd)\n");
});

Deno.test("read describes a binary file and lists a directory", async () => {
  await using dir = await tempDir();
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  await Deno.writeFile(join(dir.path, "img.png"), png);
  await Deno.mkdir(join(dir.path, "sub"));
  await using t = await builtinRuntime(dir.path);
  const bin = await call(t.rt, "read", { path: "img.png" });
  assert.equal(bin.said, `"img.png" is a binary file (PNG image), 12 bytes; not shown\n`);
  const list = await call(t.rt, "read", { path: "." });
  assert.equal(list.said, "img.png\nsub/\n");
  const missing = await call(t.rt, "read", { path: "nope.txt" });
  assert.equal(missing.is_error, true);
  assert.equal(missing.said, `Cannot read "nope.txt": no such file or directory\n`);
});

Deno.test("read takes the right lines of files smaller and larger than its read buffer", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  // 70 lines of 1000 bytes (one buffer of the file's size), and 3000 (1 MiB buffers: lines
  // cut between reads).
  for (const count of [70, 3000]) {
    const body = Array.from({ length: count }, (_, i) => `${i + 1}:`.padEnd(999, "x") + "\n");
    await Deno.writeTextFile(join(dir.path, `f${count}.txt`), body.join(""));
    const r = await call(t.rt, "read", { path: `f${count}.txt`, offset: count - 1, limit: 5 });
    assert.equal(r.is_error, false, r.said);
    const shown = r.said.split("\n").map((l: string) => l.split("\t")[1]?.slice(0, 8));
    assert.deepEqual(shown, [
      `${count - 1}:xxxxxxx`.slice(0, 8),
      `${count}:xxxxxxx`.slice(0, 8),
      undefined,
    ]);
  }
});

// Its peak memory after a 2 GB hole is a figure of `deno task bench:memory`.
Deno.test("read takes lines after a 256 MiB hole of a sparse file", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "sparse.log");
  await sparseLog(path, 256 * 1024 ** 2);
  const run = await magi(
    ["call", "read", JSON.stringify({ path: "sparse.log", offset: 10_000, limit: 4 }), "--json"],
    { cwd: dir.path },
  );
  const result = JSON.parse(run.stdout);
  assert.equal(result.is_error, false, result.said);
  const said: string = result.said;
  assert.match(
    said,
    /^10000\thead 10000\n10001\t\ufffd{2000} … \[line cut: \d+ bytes\]\n10002\ttail 1\n10003\ttail 2\n$/,
  );
});

Deno.test("read through magi call refuses a path outside the roots", async () => {
  await using dir = await tempDir();
  const run = await magi(["call", "read", '{"path":"/etc/hostname"}'], { cwd: dir.path });
  assert.equal(run.code, 1);
  assert.match(run.stdout, /outside the (allowed )?roots/);
});
