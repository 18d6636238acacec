import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

async function tree(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const path = join(root, name);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
  }
}

Deno.test("grep honours .gitignore at every level, skips .git and binary files", async () => {
  await using dir = await tempDir();
  await tree(dir.path, {
    ".gitignore": "build/\n*.log\n",
    "src/a.ts": "const needle = 1;\nother\n",
    "src/.gitignore": "gen.ts\n!keep.log\n",
    "src/gen.ts": "needle generated\n",
    "src/keep.log": "needle kept\n",
    "build/out.js": "needle built\n",
    "debug.log": "needle logged\n",
    ".git/config": "needle in git\n",
    "bin.dat": new Uint8Array([110, 101, 101, 100, 108, 101, 0, 1, 2]),
    "b.txt": "a needle\nNEEDLE\n",
  });
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "needle" });
  assert.equal(r.is_error, false, r.said);
  assert.equal(
    r.said,
    "b.txt:1:a needle\nsrc/a.ts:1:const needle = 1;\nsrc/keep.log:1:needle kept\n",
  );
  const i = await call(t.rt, "grep", { pattern: "needle", ignore_case: true, paths: ["b.txt"] });
  assert.equal(i.said, "b.txt:1:a needle\nb.txt:2:NEEDLE\n");
  const glob = await call(t.rt, "grep", { pattern: "needle", glob: "*.ts" });
  assert.equal(glob.said, "src/a.ts:1:const needle = 1;\n");
});

Deno.test("grep stops at limit and says how many more matching lines there were", async () => {
  await using dir = await tempDir();
  const lines = Array.from({ length: 30 }, (_, i) => `hit ${i + 1}`).join("\n") + "\n";
  await tree(dir.path, { "many.txt": lines, "z.txt": "hit z\n" });
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "hit", limit: 3 });
  assert.equal(
    r.said,
    "many.txt:1:hit 1\nmany.txt:2:hit 2\nmany.txt:3:hit 3\n" +
      "(28 more matching lines not shown; narrow the search or raise limit)\n",
  );
});

Deno.test("grep gives context lines, whole words, and says so when nothing matches", async () => {
  await using dir = await tempDir();
  await tree(dir.path, { "c.txt": "1\n2\nfoo\n4\n5\n6\n7\nfoo bar\n9\n", "w.txt": "food\nfoo\n" });
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "foo", paths: ["c.txt"], context: 1 });
  assert.equal(
    r.said,
    "c.txt-2-2\nc.txt:3:foo\nc.txt-4-4\n--\nc.txt-7-7\nc.txt:8:foo bar\nc.txt-9-9\n",
  );
  const w = await call(t.rt, "grep", { pattern: "foo", paths: ["w.txt"], word: true });
  assert.equal(w.said, "w.txt:2:foo\n");
  const none = await call(t.rt, "grep", { pattern: "absent" });
  assert.equal(none.said, "(no matches)\n");
  const bad = await call(t.rt, "grep", { pattern: "(" });
  assert.equal(bad.is_error, true);
  assert.match(bad.said, /^Invalid pattern "\(": /);
});

Deno.test("grep matches UTF-8 text by character and cuts long lines around the match", async () => {
  await using dir = await tempDir();
  const long = "x".repeat(5000) + " needle " + "y".repeat(5000);
  await tree(dir.path, { "u.txt": "café au lait\nnaïve\n", "min.js": long + "\n" });
  await using t = await builtinRuntime(dir.path);
  assert.equal((await call(t.rt, "grep", { pattern: "caf. au" })).said, "u.txt:1:café au lait\n");
  assert.equal((await call(t.rt, "grep", { pattern: "ï" })).said, "u.txt:2:naïve\n");
  assert.equal((await call(t.rt, "grep", { pattern: "lait" })).said, "u.txt:1:café au lait\n");
  const cut = (await call(t.rt, "grep", { pattern: "needle" })).said;
  assert.match(cut, /^min\.js:1:…x+ needle y+… \[line of 10008 bytes\]\n$/);
  assert.ok(cut.length < 400, cut);
});

Deno.test("grep finds no line after a file's final newline", async () => {
  await using dir = await tempDir();
  await tree(dir.path, { "t": "a\nb\n", "u": "a\n\nb" });
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "^$" });
  assert.equal(r.is_error, false, r.said);
  assert.match(r.said, /^u:2:$/m);
  assert.ok(!r.said.includes("t:3:"), r.said);
});

Deno.test("grep honours .git/info/exclude", async () => {
  await using dir = await tempDir();
  await tree(dir.path, {
    ".git/info/exclude": "scratch.txt\n",
    "scratch.txt": "needle\n",
    "kept.txt": "needle\n",
  });
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "needle" });
  assert.match(r.said, /^kept.txt:1:needle$/m);
  assert.ok(!r.said.includes("scratch.txt"), r.said);
});

Deno.test("^ and $ end a line only at \\n, as GNU grep: a CRLF file's \\r is a character", async () => {
  await using dir = await tempDir();
  await tree(dir.path, { "crlf.txt": "abc\r\n\r\nx\r\nlast x\n\nend" });
  await using t = await builtinRuntime(dir.path);
  const grep = async (pattern: string) =>
    (await call(t.rt, "grep", { pattern, paths: ["crlf.txt"] })).said;
  const gnu = async (pattern: string) => {
    const out = await new Deno.Command("grep", {
      args: ["-nP", pattern, "crlf.txt"],
      cwd: dir.path,
      stdout: "piped",
    }).output();
    return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "")
      // (magi shows a line without its \r.)
      .map((l) => `crlf.txt:${l.replace(/\r$/, "")}\n`).join("");
  };
  for (const pattern of ["^$", "x$", "^x", "^\\r$", "[$^]", "\\^", "end$", "^(abc|last)"]) {
    const want = await gnu(pattern);
    const got = await grep(pattern);
    if (want === "") assert.match(got, /^\(no matches\)/, pattern);
    else assert.equal(got, want, pattern);
  }
});
