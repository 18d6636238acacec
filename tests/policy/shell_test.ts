import assert from "node:assert/strict";
import { normaliseArgs, readLine } from "../../lib/policy/shell.ts";

const programs = (line: string) => readLine(line).commands.map((c) => c.program);

Deno.test("readLine() finds every simple command, however nested", () => {
  assert.deepEqual(programs("a | b && c || d; e & (f); { g; }"), [
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
  ]);
  assert.deepEqual(programs("echo $(a `b`) <(c) >(d)"), ["echo", "a", "b", "c", "d"]);
  assert.deepEqual(programs("echo $(( $(a) + 1 )) ${x:-$(b)}"), ["echo", "a", "b"]);
  assert.deepEqual(programs("cat <<< $(a)"), ["cat", "a"]);
  assert.deepEqual(programs("cat <<EOF\n$(a)\nEOF\n"), ["cat", "a"]);
  assert.deepEqual(programs("if a; then b; elif c; then d; else e; fi"), ["a", "b", "c", "d", "e"]);
  assert.deepEqual(programs("for x in 1; do a; done; while b; do c; done; case y in z) d;; esac"), [
    "a",
    "b",
    "c",
    "d",
  ]);
  assert.deepEqual(programs("time -p a; ! b"), ["a", "b"]);
});

Deno.test("readLine() unwraps wrappers and nested shells, recording how it got there", () => {
  const [c] = readLine(
    `timeout -k 1 5 nice -n 2 env -i A=1 nohup stdbuf -oL command -p bash -c "sh -c 'rm -rf x'"`,
  ).commands;
  assert.equal(c.program, "rm");
  assert.deepEqual(c.flags, ["-r", "-f"]);
  assert.deepEqual(c.words, ["x"]);
  assert.deepEqual(c.via, [
    "timeout",
    "nice",
    "env",
    "nohup",
    "stdbuf",
    "command",
    "bash -c",
    "sh -c",
  ]);
  assert.deepEqual(c.assigns, ["A"]);
  const [x] = readLine("xargs -n 1 -I {} rm {}").commands;
  assert.equal(x.program, "rm");
  assert.equal(x.dynamic, true);
});

Deno.test("readLine() marks what only bash knows, and lines it cannot read", () => {
  assert.equal(readLine("ls $HOME").commands[0].dynamic, true);
  assert.equal(readLine("ls {a,b}").commands[0].dynamic, true);
  assert.equal(readLine("ls ~root").commands[0].dynamic, true);
  assert.equal(readLine("ls 'a b' \"c\" d\\ e").commands[0].dynamic, false);
  assert.deepEqual(readLine("ls 'a b' \"c\" d\\ e").commands[0].words, ["a b", "c", "d e"]);
  assert.match(readLine("echo 'open").problems[0], /does not parse/);
  assert.match(readLine("f() { :; }").problems[0], /defines a function/);
  assert.match(readLine('bash -c "$X"').problems[0], /dynamic script/);
});

Deno.test("normaliseArgs() splits combined short flags and stops at --", () => {
  assert.deepEqual(normaliseArgs(["-rf", "--force", "--x=1", "a", "--", "-b"]), {
    flags: ["-r", "-f", "--force", "--x=1"],
    words: ["a", "-b"],
  });
  assert.deepEqual(normaliseArgs(["-name", "x"], false), { flags: ["-name"], words: ["x"] });
});

Deno.test("git -C DIR moves git's relative paths; redirections are paths too", () => {
  const [g] = readLine("git -C sub -C deeper diff a").commands;
  assert.deepEqual([g.program, g.words], ["git", ["diff", "a"]]);
  assert.deepEqual(g.paths.map((p) => [p.path, p.base]), [
    ["sub", undefined],
    ["deeper", "sub"],
    ["diff", "sub/deeper"],
    ["a", "sub/deeper"],
  ]);
  const r = readLine("ls > out.txt 2>/dev/null < in.txt").commands;
  assert.deepEqual(r.map((c) => [c.program, c.paths.map((p) => `${p.access}:${p.path}`)]), [
    ["ls", []],
    [">", ["write:out.txt"]],
    ["<", ["read:in.txt"]],
  ]);
});
