import assert from "node:assert/strict";
import { Bounder } from "../../lib/pipeline/bound.ts";
import { decodeByteString, utf8ByteString } from "../../lib/pipeline/bytes.ts";

function bound(text: string, limit: number, chunk = 997) {
  const b = new Bounder([limit]);
  const bytes = utf8ByteString(text);
  for (let i = 0; i < bytes.length; i += chunk) b.push(bytes.slice(i, i + chunk));
  const [result] = b.finish("/tmp/spill.out");
  return { ...result, text: decodeByteString(result.text) };
}

Deno.test("Bounder keeps output under the limit whole", () => {
  const r = bound("short\noutput\n", 4096);
  assert.equal(r.text, "short\noutput\n");
  assert.equal(r.cut, false);
});

Deno.test("Bounder keeps head and tail, drops the middle, and says how much and where", () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`);
  const r = bound(lines.join("\n") + "\n", 4096);
  assert.ok(r.cut);
  assert.ok(utf8ByteString(r.text).length <= 4096, `${r.text.length}`);
  assert.ok(r.text.startsWith("line 1\nline 2\n"));
  assert.ok(r.text.endsWith("line 4999\nline 5000\n"));
  const note = r.text.split("\n").find((l) => l.startsWith("[magi:"))!;
  assert.match(
    note,
    /^\[magi: \d+ bytes \(\d+ lines\) dropped from the middle of \d+ bytes; the whole output is in \/tmp\/spill.out\]$/,
  );
  const kept = r.text.split("\n").filter((l) => l.startsWith("line "));
  assert.equal(kept.length + r.droppedLines, 5000);
});

Deno.test("Bounder keeps failure-looking lines of the dropped middle with their line numbers", () => {
  const lines = Array.from({ length: 20000 }, (_, i) => `step ${i + 1} ok`);
  lines[9999] = "error: the build broke here";
  lines[12344] = "FAIL tests/thing_test.ts";
  const r = bound(lines.join("\n") + "\n", 8192);
  assert.ok(r.text.includes("  line 10000: error: the build broke here"), r.text);
  assert.ok(r.text.includes("  line 12345: FAIL tests/thing_test.ts"));
});

Deno.test("Bounder cuts one giant line inside the line, never inside a UTF-8 character", () => {
  const r = bound("é".repeat(100000), 2048);
  assert.ok(r.cut);
  assert.ok(!r.text.includes("\ufffd"), "a character was split");
  assert.ok(r.text.startsWith("éé"));
  assert.ok(r.text.endsWith("éé"));
});

Deno.test("Bounder serves two limits from one pass, each with its own head and tail", () => {
  const lines = Array.from({ length: 20000 }, (_, i) => `step ${i + 1} ok`);
  lines[9999] = "error: the build broke here";
  const b = new Bounder([4096, 16384]);
  const bytes = utf8ByteString(lines.join("\n") + "\n");
  for (let i = 0; i < bytes.length; i += 4093) b.push(bytes.slice(i, i + 4093));
  const [small, large] = b.finish(null).map((r) => ({ ...r, text: decodeByteString(r.text) }));
  assert.ok(small.text.length <= 4096 && large.text.length <= 16384);
  assert.ok(large.text.length > 3 * small.text.length);
  for (const r of [small, large]) {
    assert.ok(r.text.startsWith("step 1 ok\n"));
    assert.ok(r.text.endsWith("step 20000 ok\n"));
    assert.ok(r.text.includes("  line 10000: error: the build broke here"));
    const kept = r.text.split("\n").filter((l) => l.startsWith("step ")).length;
    assert.equal(kept + r.droppedLines, 20000);
  }
});

Deno.test("Bounder keeps output between two limits whole for the larger one", () => {
  const text = "x".repeat(3000) + "\n";
  const b = new Bounder([1024, 8192]);
  b.push(text);
  const [small, large] = b.finish("/s");
  assert.ok(small.cut);
  assert.equal(large.text, text);
  assert.equal(large.cut, false);
});

Deno.test("a failure line where the head or the tail is cut is still kept", () => {
  const atHead = [
    ...Array.from({ length: 800 }, (_, i) => `line ${i}`),
    "fatal error: at the head cut " + "B".repeat(2000),
    ...Array.from({ length: 5000 }, (_, i) => `more ${i}`),
  ];
  assert.match(
    bound(atHead.join("\n") + "\n", 16384).text,
    /line 801: fatal error: at the head cut B+…/,
  );
  const atTail = [
    ...Array.from({ length: 3000 }, (_, i) => `ok line ${i}`),
    "A".repeat(1000) + " fatal error: build failed",
    ...Array.from({ length: 600 }, (_, i) => `x${i}`),
  ];
  const r = bound(atTail.join("\n") + "\n", 16384);
  assert.ok(
    r.text.includes("fatal error: build failed") || r.text.includes("line 3001: AAAA"),
    r.text,
  );
});

Deno.test("compiler flags that contain the word do not crowd out the real failure", () => {
  const noise = Array.from({ length: 3000 }, () => "gcc -Werror=format-security -Wall -c x.c");
  const lines = [...noise, "x.c:1:10: fatal error: foo.h: No such file or directory", ...noise];
  const r = bound(lines.join("\n") + "\n", 16384);
  assert.ok(
    r.text.includes("  line 3001: x.c:1:10: fatal error: foo.h: No such file or directory"),
  );
});

Deno.test("a failure word split across two chunks is found", () => {
  const b = new Bounder([2048]);
  b.push(utf8ByteString("x\n".repeat(3000) + "ERR"));
  b.push(utf8ByteString("OR: split across chunks\n" + "y\n".repeat(3000)));
  const [r] = b.finish(null);
  assert.ok(decodeByteString(r.text).includes("  line 3001: ERROR: split across chunks"));
});

Deno.test("a note naming a non-ASCII spill path stays readable", () => {
  const b = new Bounder([1024]);
  b.push(utf8ByteString("é\n".repeat(5000)));
  const [r] = b.finish("/tmp/stäte_日本/spill.out");
  assert.ok(decodeByteString(r.text).includes("the whole output is in /tmp/stäte_日本/spill.out]"));
});

Deno.test("counts of none are no failure; a strong failure line outranks the word in passing", () => {
  // "0 errors" summaries before and after the one real failure.
  const zero = Array.from({ length: 2000 }, (_, i) => `test_${i} ... ok (0 errors, 0 warnings)`);
  const r = bound([...zero, "FAIL: test_real_failure - AssertionError", ...zero].join("\n"), 16384);
  assert.match(r.text, / {2}line 2001: FAIL: test_real_failure - AssertionError\n/);
  assert.ok(!/line \d+: test_\d+ \.\.\. ok \(0 errors/.test(r.text), r.text);
  for (const none of ["failed: 0", "no errors found", "errors=0", "0 tests failed"]) {
    const lines = Array.from({ length: 3000 }, (_, i) => `step ${i}`);
    lines[1500] = none;
    assert.ok(!bound(lines.join("\n"), 8192).text.includes("failure-looking"), none);
  }
  // More weak mentions than are remembered, then the real failures: those are kept.
  const weak = Array.from({ length: 3000 }, (_, i) => `checking error handling case ${i} ... ok`);
  const lines = [...weak, "error: linking failed", ...weak, "Traceback (most recent call last):"];
  lines.push(...weak);
  const w = bound(lines.join("\n"), 16384);
  assert.match(w.text, / {2}line 3001: error: linking failed\n/);
  assert.match(w.text, / {2}line 6002: Traceback \(most recent call last\):\n/);
  assert.match(w.text, / {2}… and more\n/);
});

Deno.test("a long failure line keeps the text around the word, even across chunks", () => {
  const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} ok`);
  lines.push("x".repeat(5000) + " error: the real one", ...lines);
  for (const chunk of [997, 64 * 1024]) {
    const r = bound(lines.join("\n"), 8192, chunk);
    assert.match(r.text, / {2}line 2001: …x+ error: the real one\n/, `chunks of ${chunk}`);
  }
  const middle = "a".repeat(3000) + " fatal: in the middle " + "b".repeat(3000);
  const m = bound([...lines.slice(0, 2000), middle, ...lines.slice(0, 2000)].join("\n"), 8192);
  assert.match(m.text, / {2}line 2001: …a+ fatal: in the middle b+…\n/);
});
