/**
 * `grep` on files larger than one read: a file is searched in chunks, so a huge file is found
 * through without being held whole, context crosses chunk boundaries, and a line longer than
 * MAX_LINE_BYTES is searched in its first part with a note saying so. (Memory is measured in
 * scripts/bench_grep.ts, not asserted here.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CHUNK_BYTES, MAX_LINE_BYTES } from "../../lib/sources/builtins/_grep_file.ts";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

const LINE_TAIL = `${"filler text ".repeat(4)}..`; // with "line 0000001 " and "\n": 64 bytes

/** Writes `lines` numbered lines of 64 bytes each ("line 0000001 …"), then `last`. */
async function numberedFile(path: string, lines: number, last?: string): Promise<void> {
  await Deno.writeFile(path, new Uint8Array(0));
  const encoder = new TextEncoder();
  for (let first = 1; first <= lines; first += 16384) {
    let text = "";
    for (let n = first; n < first + 16384 && n <= lines; n++) {
      text += `line ${String(n).padStart(7, "0")} ${LINE_TAIL}\n`;
    }
    await Deno.writeFile(path, encoder.encode(text), { append: true });
  }
  if (last !== undefined) await Deno.writeTextFile(path, last, { append: true });
}

Deno.test("grep finds the one matching line near the end of a 200 MB file", async () => {
  await using dir = await tempDir();
  const lines = 200 * 16384; // 64 bytes each: 200 MiB
  await numberedFile(join(dir.path, "huge.log"), lines, "the needle is here\nlast line\n");
  const size = (await Deno.stat(join(dir.path, "huge.log"))).size;
  assert.equal(size, lines * 64 + 29);
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "needle", paths: ["huge.log"] });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, `huge.log:${lines + 1}:the needle is here\n`);
});

Deno.test("grep's line numbers and context lines cross chunk boundaries as in one piece", async () => {
  await using dir = await tempDir();
  // 64-byte lines: chunk boundaries fall on line boundaries and inside lines alike.
  const lines = Math.ceil((3 * CHUNK_BYTES) / 64) + 10;
  await numberedFile(join(dir.path, "n.txt"), lines);
  await using t = await builtinRuntime(dir.path);
  const edge = CHUNK_BYTES / 64; // the last line of the first chunk
  const picks = [edge, edge + 1, 2 * edge + 2, lines];
  const pattern = picks.map((n) => `line ${String(n).padStart(7, "0")}`).join("|");
  const r = await call(t.rt, "grep", { pattern, paths: ["n.txt"], context: 2 });
  const want: string[] = [];
  const shown = new Set<number>();
  for (const n of picks) {
    if (want.length > 0 && ![...shown].some((s) => s >= n - 3)) want.push("--");
    for (let c = n - 2; c <= n + 2 && c <= lines; c++) {
      if (shown.has(c)) continue;
      shown.add(c);
      const sep = picks.includes(c) ? ":" : "-";
      want.push(`n.txt${sep}${c}${sep}line ${String(c).padStart(7, "0")} ${LINE_TAIL}`);
    }
  }
  assert.equal(r.said, want.join("\n") + "\n");
});

Deno.test("grep gives no context line past a file's final newline", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "t"), "a\nb\n");
  await using t = await builtinRuntime(dir.path);
  const r = await call(t.rt, "grep", { pattern: "b", paths: ["t"], context: 2 });
  assert.equal(r.said, "t-1-a\nt:2:b\n");
});

Deno.test("a line longer than MAX_LINE_BYTES is searched in its first part, and the note says so", async () => {
  await using dir = await tempDir();
  const long = "early " + "x".repeat(MAX_LINE_BYTES * 3) + " late";
  await Deno.writeTextFile(join(dir.path, "wide.txt"), `one\n${long}\nthree late\n`);
  await using t = await builtinRuntime(dir.path);
  const early = await call(t.rt, "grep", { pattern: "early", paths: ["wide.txt"] });
  const note = `(1 line was longer than ${MAX_LINE_BYTES} bytes; only its first ` +
    `${MAX_LINE_BYTES} bytes were searched)`;
  assert.equal(
    early.said,
    `wide.txt:2:early ${"x".repeat(234)}… [line of ${long.length} bytes, searched in its first ` +
      `${MAX_LINE_BYTES}]\n${note}\n`,
  );
  const late = await call(t.rt, "grep", { pattern: "late", paths: ["wide.txt"] });
  assert.equal(late.said, `wide.txt:3:three late\n${note}\n`);
});
