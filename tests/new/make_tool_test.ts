import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, type NewResult } from "../../lib/cli/new.ts";
import { runTool, type ToolResult } from "../../lib/pipeline/run_tool.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const PROGRAMS = join(TESTDATA, "new", "programs");

/** A tool made by `magi new` in a temp tools folder, and a runtime that sees it. */
interface Made extends AsyncDisposable {
  result: NewResult;
  /** The folder calls run in. */
  work: string;
  call(args: Record<string, unknown>): Promise<ToolResult>;
  declaration(): { name: string; description: string; parameters: Record<string, unknown> };
}

async function made(name: string, words: string[], setup?: (work: string) => Promise<void>) {
  const dir = await tempDir("magi-new-");
  const work = join(dir.path, "work");
  await Deno.mkdir(work);
  await setup?.(work);
  const env = { ...Deno.env.toObject(), XDG_CACHE_HOME: join(dir.path, "cache") };
  const toolsDir = join(dir.path, "tools");
  const result = await makeTool({
    name,
    words,
    toolsDir,
    cwd: work,
    env,
    generic: false,
    force: false,
    dryRun: false,
  });
  const t = await testRuntime({
    toolsDirs: [toolsDir],
    // The person's own rule: a model's call of the new tool may write (workspace-write).
    config: {
      shipped_tools: false,
      policy: { rules: [{ tool: "*", source: "tools_dir", decision: "allow" }] },
    },
    cwd: work,
  });
  const ours = t.warnings.filter((w) => w.includes(`"${name}"`));
  assert.deepEqual(ours, [], "discovery complained about the new tool");
  return {
    result,
    work,
    call: (args: Record<string, unknown>) => runTool(t.rt, { name, args }),
    declaration: () => t.rt.registry.declarations().find((d) => d.name === name)!,
    [Symbol.asyncDispose]: async () => {
      await t[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  } satisfies Made;
}

function properties(m: Made): Record<string, Record<string, unknown>> {
  return m.declaration().parameters.properties as Record<string, Record<string, unknown>>;
}

Deno.test("GNU (wc): a wrapper, typed flags, stdin", async () => {
  await using m = await made("count", ["wc"]);
  assert.equal(m.result.plan.via, "wrapper");
  assert.equal(properties(m).lines.type, "boolean");
  const r = await m.call({ lines: true, stdin: "a\nb\nc\n" });
  assert.equal(r.said.trim(), "3");
  assert.equal(r.is_error, false);
  assert.match(
    m.declaration().description,
    /^Print newline, word, and byte counts.*\nUsage: count /,
  );
});

Deno.test("GNU (ls) under its own name: a wrapper, since ls's usage names the path it ran by", async () => {
  await using m = await made("ls", ["ls"], (w) => Deno.writeTextFile(join(w, "b.txt"), ""));
  assert.equal(m.result.plan.via, "wrapper");
  assert.equal(m.result.capture.best?.model.style, "gnu");
  // Not "Usage: /usr/bin/ls …" nor the tool's own path.
  assert.match(
    m.declaration().description,
    /^List information about the FILEs.*\nUsage: ls \[OPTION\]/,
  );
  const r = await m.call({ opt_1: true, files: ["."] });
  assert.equal(r.said, "b.txt\n");
});

Deno.test("a program whose help keeps the contract under its own name: a symlink", async () => {
  await using dir = await tempDir();
  const keeper = join(dir.path, "keeper");
  await Deno.writeTextFile(
    keeper,
    '#!/bin/sh\n[ "$1" = "--help" ] && { echo "Prints its arguments."; echo "Usage: keeper [WORD]..."; exit 0; }\n' +
      'echo "$@"\n',
    { mode: 0o755 },
  );
  await using m = await made("keeper", [keeper]);
  assert.equal(m.result.plan.via, "symlink");
  assert.equal(Deno.readLinkSync(join(m.result.plan.folder, "keeper")), keeper);
  assert.equal(m.declaration().description, "Prints its arguments.\nUsage: keeper [WORD]...");
});

Deno.test("git subcommand (git status -h): the wrapper fixes the subcommand", async () => {
  await using m = await made("git-status", ["git", "status"], async (w) => {
    await new Deno.Command("git", { args: ["init", "-q", w] }).output();
    await Deno.writeTextFile(join(w, "new.txt"), "x");
  });
  assert.deepEqual(m.result.capture.best?.args, ["status", "-h"]);
  const r = await m.call({ short: true });
  assert.equal(r.said, "?? new.txt\n");
  const script = Deno.readTextFileSync(join(m.result.plan.folder, "git-status"));
  assert.match(script, /exec '\/usr\/bin\/git' 'status' "\$@"/);
});

Deno.test("tar: values joined with =, repeated positionals", async () => {
  await using m = await made("tar", ["tar"], (w) => Deno.writeTextFile(join(w, "x.txt"), "x"));
  // tar's summary is a paragraph of two lines: the wrapper carries it whole, not cut at "and can".
  assert.equal(m.result.plan.via, "wrapper");
  assert.match(
    m.declaration().description,
    /disk archive, and can restore individual files from the archive\nUsage: tar /,
  );
  const created = await m.call({ create: true, file: "a.tar", files: ["x.txt"] });
  assert.equal(created.is_error, false, created.said);
  const listed = await m.call({ list: true, file: "a.tar" });
  assert.equal(listed.said, "x.txt\n");
});

Deno.test("curl: a required positional and separate option values", async () => {
  await using m = await made(
    "fetch",
    ["curl"],
    (w) => Deno.writeTextFile(join(w, "page.txt"), "hi"),
  );
  assert.deepEqual(m.declaration().parameters.required, ["url"]);
  const r = await m.call({ url: `file://${m.work}/page.txt`, silent: true });
  assert.equal(r.said, "hi");
});

Deno.test("jq: filter and stdin typed; the two-value --arg goes through args", async () => {
  await using m = await made("jq", ["jq"]);
  const r = await m.call({ jq_filter: ".a", stdin: '{"a": 42}' });
  assert.equal(r.said, "42\n");
  const withArg = await m.call({ n: true, args: ["--arg", "x", "y"], jq_filter: "$x" });
  assert.equal(withArg.said, '"y"\n');
  assert.ok(m.result.report.some((l) => l.includes("--arg") && l.includes("more than one value")));
});

Deno.test("Python argparse: choices, integers, repeatable options; bad arguments are named", async () => {
  await using m = await made("greet", ["python3", join(PROGRAMS, "greet.py")]);
  const r = await m.call({
    name: "bob",
    extras: ["amy"],
    times: 2,
    tag: ["a", "b"],
    style: "fancy",
  });
  assert.equal(r.said, "*** Hello, bob, amy [a,b]\n*** Hello, bob, amy [a,b]\n");
  const bad = await m.call({ name: "bob", times: "two" });
  assert.equal(bad.is_error, true);
  assert.match(bad.said, /field "times" must be integer/);
});

Deno.test("click (dotenv): options before the COMMAND positional", async () => {
  await using m = await made(
    "dotenv",
    ["dotenv"],
    (w) => Deno.writeTextFile(join(w, "x.env"), "A=1\n"),
  );
  assert.deepEqual(properties(m).quote.enum, ["always", "never", "auto"]);
  const r = await m.call({ file: "x.env", command: "list" });
  assert.equal(r.said.trim(), "A=1");
});

Deno.test("clap (deno run): the script positional after the options", async () => {
  await using m = await made(
    "deno-run",
    ["deno", "run"],
    (w) => Deno.writeTextFile(join(w, "hello.ts"), 'console.log("hello " + Deno.args.length);\n'),
  );
  assert.deepEqual(m.declaration().parameters.required, ["script_arg"]);
  // --no-config is one of the options left out of the schema: it goes in args, before the
  // script (after it, the script would get it as its own argument).
  assert.ok(!("no_config" in properties(m)));
  const r = await m.call({ script_arg: "hello.ts", args: ["--no-config"] });
  assert.equal(r.said, "hello 0\n");
});

Deno.test("cobra (docker context ls, kubectl version): type words and name=default lines", async () => {
  await using docker = await made("docker-contexts", ["docker", "context", "ls"]);
  const r = await docker.call({ quiet: true });
  assert.equal(r.said, "default\n");
  await using kubectl = await made("kubectl-version", ["kubectl", "version"]);
  assert.equal(properties(kubectl).client.type, "boolean");
  const v = await kubectl.call({ client: true });
  assert.match(v.said, /^Client Version: /);
});

Deno.test("node: a flag with a value joined by =", async () => {
  await using m = await made("node-eval", ["node"]);
  const r = await m.call({ eval: "console.log(6 * 7)" });
  assert.equal(r.said, "42\n");
});

Deno.test("npm (npm prefix): npm's bracket option lists", async () => {
  await using m = await made("npm-prefix", ["npm", "prefix"]);
  assert.equal(properties(m).global.type, "boolean");
  const r = await m.call({});
  assert.equal(r.said.trim(), m.work);
});

Deno.test("BSD synopsis (ssh-keygen): the first form typed, the others through args", async () => {
  await using m = await made("keygen", ["ssh-keygen"]);
  assert.deepEqual(properties(m).t.enum, [
    "dsa",
    "ecdsa",
    "ecdsa-sk",
    "ed25519",
    "ed25519-sk",
    "rsa",
  ]);
  const made1 = await m.call({ q: true, t: "ed25519", f: "k", N: "", C: "test-key" });
  assert.equal(made1.is_error, false, made1.said);
  const listed = await m.call({ args: ["-l", "-f", "k.pub"] });
  assert.match(listed.said, /^256 SHA256:\S+ test-key \(ED25519\)\n$/);
});

Deno.test("docopt (naval_fate): options typed, the many usage forms left to args", async () => {
  await using m = await made("naval-fate", [join(PROGRAMS, "naval_fate")]);
  const r = await m.call({ speed: "20", args: ["ship", "x", "move", "1", "2"] });
  assert.equal(r.said, "naval_fate: --speed=20 ship x move 1 2\n");
});

Deno.test("a program whose help hangs: a generic tool, after the time limit", async () => {
  await using m = await made("hangs", [join(PROGRAMS, "hangs")]);
  assert.ok(m.result.capture.problems.some((p) => /did not finish within 5 s/.test(p)));
  assert.equal(m.result.generated, undefined);
  assert.deepEqual(Object.keys(properties(m)), ["args", "stdin"]);
  assert.match(m.declaration().description, /could not be read/);
  const r = await m.call({ args: ["a", "b"] });
  assert.equal(r.said, "hangs: a b\n");
});

Deno.test("a program whose help prints nothing: a generic tool", async () => {
  await using m = await made("silent", [join(PROGRAMS, "silent")]);
  assert.ok(m.result.capture.problems.some((p) => /printed nothing/.test(p)));
  assert.deepEqual(Object.keys(properties(m)), ["args", "stdin"]);
  const r = await m.call({ args: "x y" });
  assert.equal(r.said, "silent: x y\n");
});

Deno.test("a program whose help is 1 MB: read up to the limit, typed from what was read", async () => {
  await using m = await made("huge", [join(PROGRAMS, "huge")]);
  assert.equal(m.result.capture.best?.capped, true);
  assert.ok(m.result.report.some((l) => /cut at \d+ bytes/.test(l)));
  const r = await m.call({ quiet: true, files: ["f"] });
  assert.equal(r.said, "huge: --quiet f\n");
});

Deno.test("every corpus program gives a tool that discovery accepts and whose selftest passes", async () => {
  await using dir = await tempDir("magi-new-all-");
  const corpus = join(TESTDATA, "new", "corpus");
  const env = { ...Deno.env.toObject(), XDG_CACHE_HOME: join(dir.path, "cache") };
  const toolsDir = join(dir.path, "tools");
  const names: string[] = [];
  for (const entry of [...Deno.readDirSync(corpus)].filter((e) => e.name.endsWith(".json"))) {
    const expected = JSON.parse(Deno.readTextFileSync(join(corpus, entry.name)));
    const words = (expected.from as string).split(" ")
      .map((w) => w.startsWith("programs/") ? join(TESTDATA, "new", w) : w);
    const name = entry.name.replace(/\.json$/, "");
    const result = await makeTool({
      name,
      words,
      toolsDir,
      cwd: dir.path,
      env,
      generic: false,
      force: false,
      dryRun: false,
    });
    assert.equal(result.generated !== undefined, !expected.generic, name);
    names.push(name);
  }
  await using t = await testRuntime({ toolsDirs: [toolsDir], config: { shipped_tools: false } });
  const declared = new Set(t.rt.registry.declarations().map((d) => d.name));
  assert.deepEqual(names.filter((n) => !declared.has(n)), []);
  const failed: string[] = [];
  for (const name of names) {
    const out = await new Deno.Command("sh", {
      args: [join(toolsDir, name, "selftest.sh")],
      cwd: join(toolsDir, name),
      stdin: "null",
    }).output();
    if (out.code !== 0) failed.push(`${name}: ${new TextDecoder().decode(out.stdout)}`);
  }
  assert.deepEqual(failed, []);
});
