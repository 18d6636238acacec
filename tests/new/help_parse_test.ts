import assert from "node:assert/strict";
import { join } from "node:path";
import { parseHelp } from "../../lib/scaffold/help_parse.ts";
import { genericReason, schemaFromModel } from "../../lib/scaffold/schema_gen.ts";
import { buildInput, readMapping } from "../../lib/sources/argv.ts";
import { argumentsProblem, schemaProblem } from "../../lib/core/json_schema.ts";
import { TESTDATA } from "../helpers.ts";

const NEW = join(TESTDATA, "new");
const CORPUS = join(NEW, "corpus");

/** The command line a corpus entry was captured from, with fixture programs made absolute. */
function wordsOf(from: string): string[] {
  return from.split(" ").map((w) => w.startsWith("programs/") ? join(NEW, w) : w);
}

const entries = [...Deno.readDirSync(CORPUS)].filter((e) => e.name.endsWith(".json"))
  .map((e) => e.name.replace(/\.json$/, "")).sort();

Deno.test("the corpus holds at least twelve captured help texts", () => {
  assert.ok(entries.length >= 12, `only ${entries.length}`);
});

for (const name of entries) {
  Deno.test(`corpus: ${name} gives the schema checked by hand`, () => {
    const expected = JSON.parse(Deno.readTextFileSync(join(CORPUS, `${name}.json`)));
    const text = Deno.readTextFileSync(join(CORPUS, `${name}.txt`));
    const model = parseHelp(text, wordsOf(expected.from));
    if (expected.generic) {
      assert.ok(genericReason(model), "expected a generic tool");
      return;
    }
    const { schema } = schemaFromModel(model);
    assert.deepEqual(schema, expected.schema);
    assert.equal(schemaProblem(schema), null);
    assert.equal(typeof readMapping(schema), "object");
  });
}

function schemaOf(text: string, words: string[]) {
  const { schema } = schemaFromModel(parseHelp(text, words));
  const mapping = readMapping(schema);
  if (typeof mapping === "string") throw new Error(mapping);
  return { schema, argv: (args: Record<string, unknown>) => buildInput(mapping, args).args };
}

Deno.test("GNU help: booleans, values joined with =, repeated positionals after the options", () => {
  const { schema, argv } = schemaOf(
    Deno.readTextFileSync(join(CORPUS, "sort.txt")),
    ["sort"],
  );
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.equal(props.reverse.type, "boolean");
  assert.equal(props.parallel.type, "integer");
  assert.deepEqual(
    argv({ reverse: true, key: "2,2", files: ["a", "b"], args: ["-s"] }),
    ["--reverse", "--key=2,2", "-s", "a", "b"],
  );
});

Deno.test("argparse help: required positional, choices, int metavar, repeatable option", () => {
  const { schema, argv } = schemaOf(
    Deno.readTextFileSync(join(CORPUS, "greet.txt")),
    ["python3", "greet.py"],
  );
  assert.deepEqual(schema.required, ["name"]);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.style.enum, ["plain", "fancy"]);
  assert.equal(props.times.type, "integer");
  assert.equal(props.times.default, 1);
  assert.equal(props.tag.type, "array");
  assert.deepEqual(
    argv({ name: "bob", tag: ["a", "b"], times: 2 }),
    ["--times", "2", "--tag", "a", "--tag", "b", "bob"],
  );
  assert.equal(argumentsProblem(schema, { times: 2 }), 'field "name" is required');
  assert.match(argumentsProblem(schema, { name: "x", style: "odd" }) ?? "", /must be one of/);
});

Deno.test("clap help: possible values become an enum, [default: N] a default", () => {
  const text = `Frobnicate files

Usage: frob [OPTIONS] <INPUT>... 

Arguments:
  <INPUT>...  Files to frobnicate

Options:
  -l, --level <N>        How hard to try [default: 3]
      --mode <MODE>      How to frob [possible values: fast, slow]
  -v, --verbose...       More output
  -h, --help             Print help
`;
  const { schema, argv } = schemaOf(text, ["frob"]);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.mode.enum, ["fast", "slow"]);
  assert.equal(props.level.default, 3);
  assert.equal(props.level.type, "integer");
  assert.equal(props.inputs.description, "Files to frobnicate");
  assert.deepEqual(schema.required, ["inputs"]);
  assert.deepEqual(argv({ inputs: ["a"], mode: "fast", verbose: true }), [
    "--mode",
    "fast",
    "--verbose",
    "a",
  ]);
  assert.ok(!("help" in props));
});

Deno.test("cobra and Go flag help: type words are values, lists repeat", () => {
  const cobra = `Manage widgets

Usage:
  widget list [flags]

Flags:
  -l, --label stringArray   Label to match (can be repeated)
  -n, --limit int           How many (default 10)
      --all                 Every widget
  -h, --help                help for list
`;
  const { schema, argv } = schemaOf(cobra, ["widget", "list"]);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.equal(props.label.type, "array");
  assert.equal(props.limit.default, 10);
  assert.deepEqual(argv({ label: ["a", "b"], all: true }), [
    "--label",
    "a",
    "--label",
    "b",
    "--all",
  ]);
  const goFlag = `Usage of serve:
  -addr string
    \tlisten address (default ":8080")
  -v\tverbose output
`;
  const parsed = parseHelp(goFlag, ["serve"]);
  assert.deepEqual(parsed.options.map((o) => [o.flag, o.value?.metavar ?? null]), [
    ["-addr", "string"],
    ["-v", null],
  ]);
});

Deno.test("two-value options are an object of pairs; choice groups and other forms go to args", () => {
  const jq = parseHelp(Deno.readTextFileSync(join(CORPUS, "jq.txt")), ["jq"]);
  const arg = jq.options.find((o) => o.flag === "--arg");
  assert.equal(arg?.value?.pairs, true);
  const { schema: jqSchema } = schemaFromModel(jq);
  const mapping = readMapping(jqSchema);
  if (typeof mapping === "string") throw new Error(mapping);
  assert.deepEqual(buildInput(mapping, { filter: "$x", arg: { x: "y" } }).args, [
    "--arg",
    "x",
    "y",
    "$x",
  ]);
  const docopt = parseHelp(Deno.readTextFileSync(join(CORPUS, "naval-fate.txt")), ["naval_fate"]);
  assert.equal(docopt.positionals, null);
  assert.ok(docopt.options.some((o) => o.flag === "--speed"));
  const { schema } = schemaFromModel(docopt);
  assert.match(
    String((schema.properties as Record<string, Record<string, unknown>>).args.description),
    /could not be typed/,
  );
});

Deno.test("a text with neither options nor a usage line gives a generic tool", () => {
  const model = parseHelp("This program does things.\nIt has no options.\n", ["thing"]);
  assert.ok(genericReason(model));
  assert.equal(model.summary, "This program does things");
});

Deno.test("descriptions are trimmed to one line", () => {
  const model = parseHelp(Deno.readTextFileSync(join(CORPUS, "docker-ps.txt")), ["docker", "ps"]);
  for (const o of model.options) {
    assert.ok(!o.description.includes("\n"));
    assert.ok(o.description.length <= 200);
  }
  const format = model.options.find((o) => o.flag === "--format");
  assert.equal(format?.description, "Format output using a custom template:");
});

Deno.test("Node commander help: <value...> repeats, --no-x is a flag, Arguments describe", () => {
  const text = `Usage: pizza [options] <size>

An application for pizza ordering

Arguments:
  size                       the pizza size

Options:
  -V, --version              output the version number
  -p, --peppers              Add peppers
  -c, --cheese <type>        Add the specified type of cheese (default: "marble")
  -t, --toppings <items...>  toppings to add
  -C, --no-cheese            You do not want any cheese
  -h, --help                 display help for command
`;
  const model = parseHelp(text, ["pizza"]);
  assert.equal(model.summary, "An application for pizza ordering");
  const { schema, argv } = schemaOf(text, ["pizza"]);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(props), [
    "size",
    "peppers",
    "cheese",
    "toppings",
    "no_cheese",
    "args",
    "stdin",
  ]);
  assert.equal(props.size.description, "the pizza size");
  assert.equal(props.toppings.type, "array");
  assert.deepEqual(argv({ size: "L", toppings: ["ham", "olive"], no_cheese: true }), [
    "--toppings",
    "ham",
    "--toppings",
    "olive",
    "--no-cheese",
    "L",
  ]);
});

Deno.test("Node yargs help: trailing [string] [number] [array] [choices] [required] tags", () => {
  const text = `Usage: serve <dir> [options]

Options:
      --version  Show version number                                   [boolean]
  -p, --port     Port to listen on                      [number] [default: 8080]
  -H, --host     Host to bind                    [string] [default: "localhost"]
  -m, --mode     Mode            [string] [choices: "dev", "prod"] [default: "dev"]
  -t, --tag      Tags                                                    [array]
  -k, --key      API key name                                [string] [required]
  -o, --open     Open browser                                          [boolean]
      --help     Show help                                             [boolean]
`;
  const { schema, argv } = schemaOf(text, ["serve"]);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.port, { type: "number", default: 8080, description: "Port to listen on" });
  assert.deepEqual(props.mode.enum, ["dev", "prod"]);
  assert.equal(props.mode.default, "dev");
  assert.equal(props.tag.type, "array");
  assert.equal(props.open.type, "boolean");
  assert.deepEqual(schema.required, ["key", "dir"]);
  assert.deepEqual(argv({ dir: ".", key: "k1", port: 9000, open: true }), [
    "--port",
    "9000",
    "--key",
    "k1",
    "--open",
    ".",
  ]);
});

Deno.test("an indented sentence right after the usage line is prose, not positionals", () => {
  const model = parseHelp("Usage: conv [options] FILE\n  Converts one file.\n\n  -q  quiet\n", [
    "conv",
  ]);
  assert.deepEqual(model.positionals?.map((p) => p.name), ["FILE"]);
  assert.equal(model.summary, "Converts one file");
});

Deno.test("options that exclude each other in a synopsis are left to args", () => {
  const model = parseHelp(
    "usage: lamp [-q] [-on | -off] [--bright | --dim] [-v|--verbose] name\n",
    [
      "lamp",
    ],
  );
  assert.deepEqual(model.options.map((o) => o.names), [["-q"], ["-v", "--verbose"]]);
  assert.deepEqual(
    model.skipped.filter((s) => /exclude each other/.test(s.why)).map((s) => s.what),
    ['usage option "[-on | -off]"', 'usage option "[--bright | --dim]"'],
  );
  assert.deepEqual(model.positionals?.map((p) => p.name), ["name"]);
});

Deno.test("excluding options that the option list describes stay typed, with a caveat", () => {
  const text =
    "usage: lamp [-h] [--bright | --dim]\n\noptions:\n  --bright  more light\n  --dim     less light\n";
  const model = parseHelp(text, ["lamp"]);
  assert.deepEqual(model.options.map((o) => o.flag), ["--bright", "--dim"]);
  assert.match(model.skipped.find((s) => s.what.includes("--bright"))?.why ?? "", /give one/);
});

Deno.test("parseHelp never throws on text that is not help", () => {
  const texts = [
    "",
    "\n\n\n",
    "Usage: p " + "[a ".repeat(2000),
    "usage: p [[[-x]]] <<y>> {a,b} (c|d) ]]]",
    "  --opt " + "[string] ".repeat(500),
    "  -\n  --\n  ---x\n  -=\n  --=[\n",
    new TextDecoder().decode(Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)),
  ];
  for (const text of texts) {
    const model = parseHelp(text, ["p"]);
    if (!genericReason(model)) assert.equal(schemaProblem(schemaFromModel(model).schema), null);
  }
});
