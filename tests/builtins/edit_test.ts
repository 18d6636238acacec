import assert from "node:assert/strict";
import { join } from "node:path";
import { magiArgs, tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

Deno.test("edit replaces one match and shows a unified diff", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "a.ts");
  await Deno.writeTextFile(path, "a\nb\nc\nd\ne\nf\ng\nh\n");
  await Deno.chmod(path, 0o640);
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "edit", { path: "a.ts", old_string: "e\n", new_string: "E1\nE2\n" });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "patched a.ts: +2 \u22121\n");
  assert.equal(await Deno.readTextFile(path), "a\nb\nc\nd\nE1\nE2\nf\ng\nh\n");
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640);
  assert.equal(
    r.shown,
    "patched a.ts: +2 \u22121\n--- a.ts\n+++ a.ts\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+E1\n+E2\n f\n g\n h\n",
  );
});

Deno.test("edit keeps CRLF line endings and a BOM", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "win.txt");
  await Deno.writeTextFile(path, "\ufeffone\r\ntwo\r\nthree\r\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "edit", {
    path: "win.txt",
    old_string: "two\nthree",
    new_string: "2\n3\n3.5",
  });
  assert.equal(r.is_error, false, r.said);
  assert.equal(await Deno.readTextFile(path), "\ufeffone\r\n2\r\n3\r\n3.5\r\n");
  const bytes = await Deno.readFile(path);
  assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
});

Deno.test("edit with two matches is an error naming the lines; replace_all changes both", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "b.txt");
  await Deno.writeTextFile(path, "x = 1\ny = 2\nx = 1\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "edit", { path: "b.txt", old_string: "x = 1", new_string: "x = 3" });
  assert.equal(r.is_error, true);
  assert.equal(
    r.said,
    'old_string occurs 2 times in "b.txt" (at lines 1, 3); include more surrounding lines so it matches once, or set replace_all to change every one\n',
  );
  assert.equal(await Deno.readTextFile(path), "x = 1\ny = 2\nx = 1\n");
  const all = await call(t.rt, "edit", {
    path: "b.txt",
    old_string: "x = 1",
    new_string: "x = $&3",
    replace_all: true,
  });
  assert.equal(all.said, "patched b.txt: +2 \u22122 (2 replacements)\n");
  assert.equal(await Deno.readTextFile(path), "x = $&3\ny = 2\nx = $&3\n");
});

Deno.test("edit that finds nothing tells the model how to fix the call", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "c.py"), "def f():\n    return 1\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "edit", {
    path: "c.py",
    old_string: "def f():\n  return 1",
    new_string: "def f():\n    return 2",
  });
  assert.equal(r.is_error, true);
  assert.match(r.said, /^old_string was not found in "c.py"; its first line occurs at line 1/);
  const missing = await call(t.rt, "edit", { path: "nope.py", old_string: "a", new_string: "b" });
  assert.equal(missing.said, 'Cannot edit "nope.py": no such file; use write to create it\n');
});

Deno.test("edit killed mid-way leaves the old file or the new one, never a part", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "big.txt");
  const line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxy\n";
  const old = "FIRST\n" + line.repeat(1_200_000); // about 88 MB
  await Deno.writeTextFile(path, old);
  const size = old.length;
  const home = join(dir.path, "home");
  const spawnEdit = () =>
    new Deno.Command("deno", {
      args: magiArgs([
        "call",
        "edit",
        JSON.stringify({ path: "big.txt", old_string: "FIRST", new_string: "SECOND" }),
      ]),
      cwd: dir.path,
      env: { XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home, XDG_STATE_HOME: home },
      stdout: "null",
      stderr: "null",
    }).spawn();
  const head = async () => {
    using f = await Deno.open(path);
    const buf = new Uint8Array(6);
    await f.read(buf);
    return new TextDecoder().decode(buf);
  };
  let killedMidWrite = 0;
  for (let attempt = 0; attempt < 6 && killedMidWrite === 0; attempt++) {
    const child = spawnEdit();
    let exited = false;
    child.status.then(() => exited = true);
    // Wait until the temp file beside the target is being written, then kill magi hard.
    while (!exited) {
      const tmp = [...Deno.readDirSync(dir.path)].find((e) => e.name.endsWith(".tmp"));
      if (tmp) {
        try {
          const partial = Deno.statSync(join(dir.path, tmp.name)).size;
          if (partial > 0 && partial < size) {
            child.kill("SIGKILL");
            killedMidWrite++;
            break;
          }
        } catch {
          // Renamed just now.
        }
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    await child.status;
    const now = await Deno.stat(path);
    const first = await head();
    assert.ok(
      (first === "FIRST\n" && now.size === size) || (first === "SECOND" && now.size === size + 1),
      `file is neither old nor new: starts "${first}", ${now.size} bytes`,
    );
    if (first === "SECOND") await Deno.writeTextFile(path, old);
    for (const e of Deno.readDirSync(dir.path)) {
      if (e.name.endsWith(".tmp")) await Deno.remove(join(dir.path, e.name));
    }
  }
  assert.ok(killedMidWrite > 0, "never caught the edit while it wrote");
  // And an edit left alone finishes.
  assert.equal((await spawnEdit().status).code, 0);
  assert.equal(await head(), "SECOND");
});

Deno.test("edit in a file of mixed line endings matches LF text against CRLF lines", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "mixed.txt");
  await Deno.writeTextFile(path, "a\nb\r\nc\r\nd\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "edit", { path: "mixed.txt", old_string: "b\nc", new_string: "B\nC" });
  assert.equal(r.is_error, false, r.said);
  assert.equal(await Deno.readTextFile(path), "a\nB\r\nC\r\nd\n");
});
