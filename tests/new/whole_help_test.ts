/**
 * `magi new` reads the whole help of recorded programs (their texts replayed by stand-ins):
 * the fuller help, the manual page, the program's shape, and a selftest that calls it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { NewResult } from "../../lib/cli/new.ts";
import { runTool, type ToolResult } from "../../lib/runtime/run_tool.ts";
import { madeInTemp } from "./made.ts";
import { RECORDED } from "./recorded_set.ts";

interface Made extends AsyncDisposable {
  result: NewResult;
  work: string;
  props: Record<string, Record<string, unknown>>;
  argv: { flag?: string; field?: string }[];
  call(args: Record<string, unknown>): Promise<ToolResult>;
  selftest(): Promise<{ code: number; out: string }>;
}

/** A tool made from a recorded program; calls reach the real program where it is installed. */
async function recorded(name: string): Promise<Made> {
  const m = await madeInTemp(name, RECORDED[name].from.split(" "), {
    prefix: "magi-new-whole-",
    standIns: [name],
    passThrough: true,
  });
  const { result, work, toolsDir, runtime: t } = m;
  const schema = JSON.parse(Deno.readTextFileSync(join(toolsDir, name, "schema.json")));
  return {
    result,
    work,
    props: schema.properties,
    argv: schema["x-magi"].argv,
    call: (args) => runTool(t.rt, { name, args }),
    selftest: async () => {
      const out = await new Deno.Command("sh", {
        args: [join(toolsDir, name, "selftest.sh")],
        stdin: "null",
      }).output();
      return { code: out.code, out: new TextDecoder().decode(out.stdout) };
    },
    [Symbol.asyncDispose]: () => m[Symbol.asyncDispose](),
  };
}

Deno.test("find: options read from the manual page, none merged; paths, predicates, then the expression", async () => {
  await using m = await recorded("find");
  const options = m.result.capture.best!.model.options;
  for (const name of ["-nouser", "-nogroup", "-path", "-delete"]) {
    const o = options.find((x) => x.names.includes(name));
    assert.deepEqual(o?.names, [name], `${name} stands alone`);
  }
  assert.match(options.find((o) => o.flag === "-delete")!.description, /^Delete files/);
  assert.equal(m.props.maxdepth.type, "integer");
  assert.equal(m.props.expression.type, "array");
  const order = m.argv.map((i) => i.field ?? i.flag);
  assert.ok(order.indexOf("paths") < order.indexOf("name"), "predicates after the paths");
  assert.equal(order.at(-1), "expression");
  await Deno.writeTextFile(join(m.work, "a.ts"), "");
  await Deno.writeTextFile(join(m.work, "b.txt"), "");
  const r = await m.call({
    paths: ["."],
    maxdepth: 1,
    expression: ["-name", "*.ts", "-o", "-name", "*.md"],
  });
  assert.equal(r.is_error, false, r.said);
  assert.equal(r.said, "./a.ts\n");
  const typed = await m.call({ paths: ["."], type: "f", name: "*.txt" });
  assert.equal(typed.said, "./b.txt\n");
  assert.equal((await m.selftest()).code, 0);
});

Deno.test("curl: --help all is read as well; the everyday flags are typed; the URL stays required", async () => {
  await using m = await recorded("curl");
  assert.deepEqual(m.result.capture.best!.more, ["--help", "all"]);
  assert.ok(m.result.capture.best!.model.options.length > 240);
  const flags = new Set(m.argv.map((i) => i.flag));
  for (const f of ["--request", "--header", "--location", "--head", "--insecure"]) {
    assert.ok(flags.has(f), `${f} is typed`);
  }
  assert.ok(m.props.url, "url is a parameter");
  assert.match(m.result.plan.summary, /^Transfer a URL/);
});

Deno.test("jq: the manual page gives long names (-c is --compact-output); --arg takes pairs", async () => {
  await using m = await recorded("jq");
  assert.ok(m.argv.some((i) => i.flag === "--compact-output"));
  assert.equal(m.props.arg.type, "object");
  const r = await m.call({ filter: "$x", null_input: true, arg: { x: "y" } });
  assert.equal(r.said, '"y"\n');
});

Deno.test("sed: the script, then the files; -i without a suffix edits in place", async () => {
  await using m = await recorded("sed");
  assert.deepEqual(Object.keys(m.props).slice(0, 2), ["script", "input_files"]);
  await Deno.writeTextFile(join(m.work, "f.txt"), "hello\n");
  const r = await m.call({ in_place: "", script: "s/hello/bye/", input_files: ["f.txt"] });
  assert.equal(r.is_error, false, r.said);
  assert.equal(Deno.readTextFileSync(join(m.work, "f.txt")), "bye\n");
});

Deno.test("test: no help text, so the manual page describes it; the expression is a list of words", async () => {
  await using m = await recorded("test");
  assert.equal(m.result.plan.summary.split("\n")[0], "Check file types and compare values");
  assert.equal(m.props.expression.type, "array");
  assert.equal((await m.call({ expression: ["-d", "."] })).is_error, false);
  assert.equal((await m.call({ expression: ["-f", "nothing-here"] })).is_error, true);
  assert.equal((await m.selftest()).code, 0);
});

Deno.test("git commit: its pathspec is a positional; the selftest makes a dry run", async () => {
  await using m = await recorded("git-commit");
  assert.equal(m.props.pathspecs.type, "array");
  assert.ok(m.props.message && m.props.amend && m.props.no_edit);
  const st = await m.selftest();
  assert.equal(st.code, 0, st.out);
  assert.match(Deno.readTextFileSync(join(m.result.plan.folder, "selftest.sh")), /--dry-run \./);
});

Deno.test("ssh-keygen: one-letter options named by their values; -b bits an integer", async () => {
  await using m = await recorded("ssh-keygen");
  assert.equal(m.props.bits.type, "integer");
  assert.ok(m.props.comment && m.props.new_passphrase);
  assert.ok(
    !Object.keys(m.props).some((k) => /^[a-z]$/i.test(k) && k !== "t"),
    Object.keys(m.props).join(),
  );
});

Deno.test("a tool whose program cannot be called fails its selftest", async () => {
  await using m = await recorded("xargs");
  assert.equal((await m.selftest()).code, 0);
  const script = Deno.readTextFileSync(join(m.result.plan.folder, "xargs"));
  const program = /^exec '([^']+)'/m.exec(script)![1];
  await Deno.remove(program);
  const st = await m.selftest();
  assert.notEqual(st.code, 0);
  assert.match(st.out, /^FAIL: /);
});
