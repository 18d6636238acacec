import assert from "node:assert/strict";
import { join } from "node:path";
import { newTool } from "./made.ts";
import {
  boundedSchema,
  DECLARATION_BUDGET,
  DEFAULT_MAX_PARAMS,
  pickOptions,
} from "../../lib/scaffold/budget.ts";
import { parseHelp } from "../../lib/scaffold/help_parse.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { buildInput, readMapping } from "../../lib/sources/argv.ts";
import { stripExtensions } from "../../lib/core/json_schema.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const CORPUS = join(TESTDATA, "new", "corpus");

function corpus(name: string) {
  const expected = JSON.parse(Deno.readTextFileSync(join(CORPUS, `${name}.json`)));
  const text = Deno.readTextFileSync(join(CORPUS, `${name}.txt`));
  const words = (expected.from as string).split(" ")
    .map((w) => w.startsWith("programs/") ? join(TESTDATA, "new", w) : w);
  return { expected, text, words, model: parseHelp(text, words) };
}

function bytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

Deno.test("tar's 154 options give a declaration under the budget that keeps the common ones", () => {
  const { text, words, model } = corpus("tar");
  assert.equal(model.options.length, 154);
  const got = boundedSchema(model, { text, words, budget: DECLARATION_BUDGET - 200 });
  const props = got.schema.properties as Record<string, { description: string }>;
  assert.ok(got.bytes <= DECLARATION_BUDGET - 200, `${got.bytes} bytes`);
  assert.equal(got.bytes, bytes(stripExtensions(got.schema)));
  assert.ok(Object.keys(props).length <= DEFAULT_MAX_PARAMS + 2); // and args, stdin
  for (const field of ["create", "extract", "list", "file", "verbose", "gzip", "bzip2"]) {
    assert.ok(field in props, `${field} is typed`);
  }
  assert.ok("directory" in props, "-C is typed");
  // --exclude is typed (a name many programs share); rare ones are left to args.
  assert.ok("exclude" in props && !("checkpoint_action" in props));
  assert.equal(got.left.length, 154 - got.kept);
  assert.match(
    props.args.description,
    /^More options of tar \(\d+ not typed above, such as --\S+.*\) and other words, as argv words placed before the positionals; args \["--help"\] lists them all$/,
  );
});

Deno.test("a left-out option goes in args, after the typed options and before the positionals", () => {
  const { text, words, model } = corpus("tar");
  const { schema } = boundedSchema(model, { text, words, budget: 4000 });
  const mapping = readMapping(schema);
  if (typeof mapping === "string") throw new Error(mapping);
  assert.deepEqual(
    buildInput(mapping, { files: ["d"], args: ["--exclude=*.log"], create: true, file: "a.tar" })
      .args,
    ["--create", "--file=a.tar", "--exclude=*.log", "d"],
  );
});

Deno.test("ls keeps -l, -a, -r, -t, -h and -1, and fits the budget", () => {
  const { text, words, model } = corpus("ls");
  const got = boundedSchema(model, { text, words, budget: 3900 });
  const props = got.schema.properties as Record<string, unknown>;
  // One-letter options are named by their description: -l "use a long listing format".
  for (
    const field of ["long_listing", "all", "reverse", "sort_by_time", "human_readable", "list_one"]
  ) {
    assert.ok(field in props, `${field} is typed`);
  }
  assert.ok(got.bytes <= 3900);
});

Deno.test("a small program's schema is the one checked by hand, unchanged", () => {
  for (const name of ["wc", "greet", "jq", "curl", "git-log", "ssh-keygen", "dotenv"]) {
    const { expected, text, words, model } = corpus(name);
    const got = boundedSchema(model, { text, words, budget: 3800 });
    assert.deepEqual(got.schema, expected.schema, name);
    assert.deepEqual(got.left, [], name);
    assert.equal(got.shortened, undefined, name);
  }
});

Deno.test("--only types the named options by any spelling; --max-params is kept over the budget", () => {
  const { text, words, model } = corpus("tar");
  const only = ["-c", "--file", "verbose", "files_from", "x"];
  assert.deepEqual(pickOptions(model, only).map((o) => o.flag), [
    "--create",
    "--extract",
    "--files-from",
    "--file",
    "--verbose",
  ]);
  const picked = boundedSchema(model, { text, words, only, budget: 4000 });
  assert.deepEqual(Object.keys(picked.schema.properties as object), [
    "files",
    "create",
    "extract",
    "files_from",
    "file",
    "verbose",
    "args",
    "stdin",
  ]);
  assert.throws(() => pickOptions(model, ["--nope"]), /--only names "--nope", which the help/);
  const many = boundedSchema(model, { text, words, maxParams: 200, budget: 4000 });
  assert.equal(many.left.length, 0);
  assert.ok(many.bytes > 4000);
  const few = boundedSchema(model, { text, words, maxParams: 3, budget: 4000 });
  assert.deepEqual(Object.keys(few.schema.properties as object), [
    "files",
    "list",
    "extract",
    "args",
    "stdin",
  ]);
});

Deno.test("magi new tar: a small declaration; args reach tar before the files; the policy sees paths in args", async () => {
  await using dir = await tempDir("magi-new-budget-");
  const work = join(dir.path, "work");
  await Deno.mkdir(join(work, "d"), { recursive: true });
  await Deno.writeTextFile(join(work, "d", "keep.txt"), "k");
  await Deno.writeTextFile(join(work, "d", "drop.log"), "d");
  const toolsDir = join(dir.path, "tools");
  const made = await newTool({
    name: "tar",
    words: ["tar"],
    toolsDir,
    cwd: work,
    env: { ...Deno.env.toObject(), XDG_CACHE_HOME: join(dir.path, "cache") },
  });
  assert.ok(
    made.report.some((l) =>
      /^left out \d+ of \d+ options \(.*\) to keep the declaration small \(\d+ bytes of parameters(; descriptions cut to \d+ characters)?\): the model passes them in args; type more with --max-params N \(now 64\) or name them with --only a,b,c$/
        .test(l)
    ),
    made.report.join("\n"),
  );
  await using t = await testRuntime({
    toolsDirs: [toolsDir],
    // The person's own rule: a model's call of the new tool may write (workspace-write).
    config: {
      shipped_tools: false,
      roots: [work],
      policy: { rules: [{ tool: "*", source: "tools_dir", decision: "allow" }] },
    },
    cwd: work,
  });
  const declaration = t.rt.registry.declarations().find((d) => d.name === "tar")!;
  assert.ok(bytes(declaration) < DECLARATION_BUDGET, `${bytes(declaration)} bytes`);

  const call = (args: Record<string, unknown>) =>
    runTool(t.rt, { name: "tar", args, caller: "model" });
  // GNU tar applies --exclude only to the file names after it.
  const created = await call({
    create: true,
    file: "a.tar",
    args: ["--exclude=*.log"],
    files: ["d"],
  });
  assert.equal(created.is_error, false, created.said);
  const listed = await call({ list: true, file: "a.tar" });
  assert.deepEqual(listed.said.split("\n").filter((l) => l !== "").sort(), ["d/", "d/keep.txt"]);
  const outside = await call({ extract: true, file: "a.tar", args: ["-C", "/tmp"] });
  assert.equal(outside.is_error, true);
  assert.match(outside.said, /deny by rule "outside-roots-tools"/);
});
