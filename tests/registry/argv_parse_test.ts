import assert from "node:assert/strict";
import { buildInput, readMapping } from "../../lib/sources/argv.ts";
import { ArgvError, parseArgv } from "../../lib/sources/argv_parse.ts";
import { BUILTINS } from "../../lib/sources/builtins/mod.ts";

function builtin(name: string) {
  const b = BUILTINS.find((x) => x.name === name)!;
  const mapping = readMapping(b.parameters);
  if (typeof mapping === "string") throw new Error(mapping);
  return { mapping, schema: b.parameters };
}

Deno.test("parseArgv() reads grep's usage line back into arguments", () => {
  const { mapping, schema } = builtin("grep");
  assert.deepEqual(
    parseArgv(mapping, schema, ["TODO", "src", "lib", "--limit", "5", "--word", "--glob=*.ts"]),
    { pattern: "TODO", paths: ["src", "lib"], limit: 5, word: true, glob: "*.ts" },
  );
  assert.deepEqual(parseArgv(mapping, schema, ["--", "-x"]), { pattern: "-x" });
  assert.throws(() => parseArgv(mapping, schema, ["a", "--nope"]), ArgvError);
  assert.throws(() => parseArgv(mapping, schema, ["a", "--limit"]), /needs a value/);
  assert.throws(() => parseArgv(mapping, schema, ["a", "--context", "1.5"]), /whole number/);
});

Deno.test("parseArgv() takes write's content and edit's JSON from stdin", () => {
  const w = builtin("write");
  assert.deepEqual(parseArgv(w.mapping, w.schema, ["a.txt"], "x\ny\n"), {
    path: "a.txt",
    content: "x\ny\n",
  });
  const e = builtin("edit");
  const stdin = JSON.stringify({ old_string: 'say "hi"\n', new_string: "\\n", path: "ignored" });
  assert.deepEqual(parseArgv(e.mapping, e.schema, ["f.ts", "--all"], stdin), {
    path: "f.ts",
    replace_all: true,
    old_string: 'say "hi"\n',
    new_string: "\\n",
  });
  assert.throws(() => parseArgv(e.mapping, e.schema, ["f.ts"], "not json"), /stdin is not JSON/);
  assert.throws(() => parseArgv(e.mapping, e.schema, ["f.ts", "extra"], "{}"), /unexpected/);
});

Deno.test("parseArgv() reads run's numbers and read's options", () => {
  const r = builtin("run");
  assert.deepEqual(parseArgv(r.mapping, r.schema, ["ls -l", "--timeout-seconds", "2.5"]), {
    command: "ls -l",
    timeout_seconds: 2.5,
  });
  const rd = builtin("read");
  assert.deepEqual(parseArgv(rd.mapping, rd.schema, ["f", "--offset=3", "--limit", "2"]), {
    path: "f",
    offset: 3,
    limit: 2,
  });
});

Deno.test('argv forms: optional ("" gives the bare flag) and pairs (an object, flag KEY VALUE)', () => {
  const schema = {
    type: "object",
    properties: { in_place: { type: "string" }, arg: { type: "object" } },
    "x-magi": {
      argv: [
        { flag: "--in-place", field: "in_place", join: "=", optional: true },
        { flag: "--arg", field: "arg", pairs: true },
      ],
    },
  };
  const mapping = readMapping(schema);
  if (typeof mapping === "string") throw new Error(mapping);
  assert.deepEqual(buildInput(mapping, { in_place: "", arg: { a: "1", b: "2" } }).args, [
    "--in-place",
    "--arg",
    "a",
    "1",
    "--arg",
    "b",
    "2",
  ]);
  assert.deepEqual(buildInput(mapping, { in_place: ".bak" }).args, ["--in-place=.bak"]);
  const bad = readMapping({
    ...schema,
    "x-magi": { argv: [{ flag: "-x", field: "arg", pairs: 1 }] },
  });
  assert.equal(bad, "x-magi.argv[0].pairs must be true or false");
});
