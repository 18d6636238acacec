import assert from "node:assert/strict";
import { join } from "node:path";
import type { NewResult } from "../../lib/cli/new.ts";
import { runTool, type ToolResult } from "../../lib/runtime/run_tool.ts";
import { pooled, tempDir, TESTDATA, testRuntime } from "../helpers.ts";
import { findProgram } from "../../lib/scaffold/capture.ts";
import { recordedNames, writeStandIns } from "./recorded.ts";
import { madeInTemp, newTool } from "./made.ts";
import { RECORDED } from "./recorded_set.ts";

const PROGRAMS = join(TESTDATA, "new", "programs");

/** A tool made by `magi new` in a temp tools folder, and a runtime that sees it. */
interface Made extends AsyncDisposable {
  result: NewResult;
  /** The folder calls run in. */
  work: string;
  call(args: Record<string, unknown>): Promise<ToolResult>;
  declaration(): { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Makes a tool. `recorded` names programs of the recorded set to replace by stand-ins (see
 * `recorded.ts`); a `man` stand-in always comes first on PATH, so what a machine has
 * installed in manual pages does not change the tool.
 */
async function made(
  name: string,
  words: string[],
  setup?: (work: string) => Promise<void>,
  recorded: string[] = [],
) {
  const m = await madeInTemp(name, words, { prefix: "magi-new-", standIns: recorded, setup });
  const t = m.runtime;
  const ours = t.warnings.filter((w) => w.includes(`"${name}"`));
  assert.deepEqual(ours, [], "discovery complained about the new tool");
  return {
    result: m.result,
    work: m.work,
    call: (args: Record<string, unknown>) => runTool(t.rt, { name, args }),
    declaration: () => t.rt.registry.declarations().find((d) => d.name === name)!,
    [Symbol.asyncDispose]: () => m[Symbol.asyncDispose](),
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
  const r = await m.call({ list_one: true, files: ["."] });
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

Deno.test("jq: the filter first, stdin typed, the two-value --arg an object of pairs", async () => {
  await using m = await made("jq", ["jq"]);
  const r = await m.call({ filter: ".a", stdin: '{"a": 42}' });
  assert.equal(r.said, "42\n");
  assert.equal(properties(m).arg.type, "object");
  const withArg = await m.call({ null: true, arg: { x: "y" }, filter: "$x" });
  assert.equal(withArg.said, '"y"\n');
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

/** The argv a stand-in was called with (`CALLED:` then one argument a line). */
function calledWith(said: string): string[] {
  const lines = said.replace(/\n$/, "").split("\n");
  assert.equal(lines[0], "CALLED:", said);
  return lines.slice(1);
}

Deno.test("click (dotenv, recorded): options before the COMMAND positional", async () => {
  await using m = await made("dotenv", ["dotenv"], undefined, ["dotenv"]);
  assert.deepEqual(properties(m).quote.enum, ["always", "never", "auto"]);
  const r = await m.call({ file: "x.env", command: "list" });
  assert.deepEqual(calledWith(r.said), ["--file", "x.env", "list"]);
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

Deno.test("cobra (docker context ls, kubectl version, recorded): type words and name=default lines", async () => {
  await using docker = await made("docker-contexts", ["docker", "context", "ls"], undefined, [
    "docker-context-ls",
  ]);
  const r = await docker.call({ quiet: true });
  assert.deepEqual(calledWith(r.said), ["context", "ls", "--quiet"]);
  await using kubectl = await made("kubectl-version", ["kubectl", "version"], undefined, [
    "kubectl-version",
  ]);
  assert.equal(properties(kubectl).client.type, "boolean");
  const v = await kubectl.call({ client: true });
  assert.deepEqual(calledWith(v.said), ["version", "--client"]);
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
  // One-letter options are named by their values: -f output_keyfile, -N new_passphrase.
  const made1 = await m.call({
    q: true,
    t: "ed25519",
    output_keyfile: "k",
    new_passphrase: "",
    comment: "test-key",
  });
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

/** Makes a tool for each entry, then checks discovery, the selftests and the declarations. */
async function makeAll(
  dir: string,
  entries: { name: string; words: string[] }[],
  env: Record<string, string>,
): Promise<
  { failed: string[]; declarations: Map<string, unknown>; typed: Map<string, Set<string>> }
> {
  const toolsDir = join(dir, "tools");
  const typed = new Map<string, Set<string>>();
  // Each tool is made, and its selftest run, apart from the others: four at a time.
  await pooled(entries, 4, async ({ name, words }) => {
    const result = await newTool({ name, words, toolsDir, cwd: dir, env });
    assert.ok(result.generated, `${name}: a typed tool`);
    const left = new Set(result.generated.left);
    const kept = (result.capture.best?.model.options ?? []).filter((o) => !left.has(o));
    typed.set(name, new Set(kept.flatMap((o) => o.names)));
  });
  await using t = await testRuntime({
    toolsDirs: [toolsDir],
    config: { shipped_tools: false },
  });
  const declarations = new Map<string, unknown>(
    t.rt.registry.declarations().map((d) => [d.name, d]),
  );
  const failed: string[] = [];
  await pooled(entries, 4, async ({ name }) => {
    if (!declarations.has(name)) failed.push(`${name}: not declared`);
    const out = await new Deno.Command("sh", {
      args: [join(toolsDir, name, "selftest.sh")],
      cwd: join(toolsDir, name),
      // The machine's own PATH: stand-ins named grep or wc must not answer the selftest's
      // own commands (the tools reach their programs by absolute path).
      env: { ...env, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      stdin: "null",
    }).output();
    if (out.code !== 0) failed.push(`${name}: ${new TextDecoder().decode(out.stdout)}`);
  });
  failed.sort();
  return { failed, declarations, typed };
}

Deno.test("every recorded program gives a tool within 4 KB that types its everyday flags, and whose selftest passes", async () => {
  await using dir = await tempDir("magi-new-recorded-");
  const names = recordedNames();
  const bin = await writeStandIns(join(dir.path, "bin"), names);
  const env = {
    ...Deno.env.toObject(),
    PATH: `${bin}:/usr/bin:/bin`,
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  const entries = names.map((name) => ({ name, words: RECORDED[name].from.split(" ") }));
  const { failed, declarations, typed } = await makeAll(dir.path, entries, env);
  assert.deepEqual(failed, []);
  const missed: string[] = [];
  for (const name of names) {
    const bytes = new TextEncoder().encode(JSON.stringify(declarations.get(name))).length;
    assert.ok(bytes <= 4096, `${name}: ${bytes} bytes`);
    for (const f of RECORDED[name].everyday) {
      if (!typed.get(name)!.has(f)) missed.push(`${name} ${f}`);
    }
  }
  const everyday = Object.values(RECORDED).reduce((n, e) => n + e.everyday.length, 0);
  assert.ok(missed.length <= everyday * 0.05, `everyday flags not typed: ${missed.join(", ")}`);
});

Deno.test("installed programs of the recorded set give tools whose selftest passes (missing ones are skipped)", async () => {
  await using dir = await tempDir("magi-new-installed-");
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  const entries: { name: string; words: string[] }[] = [];
  const skipped: string[] = [];
  for (const name of recordedNames()) {
    const words = RECORDED[name].from.split(" ");
    if (findProgram(words[0], dir.path, env.PATH ?? "")) entries.push({ name, words });
    else skipped.push(`${name} (no ${words[0]} on PATH)`);
  }
  if (skipped.length > 0) console.log(`skipped, not installed: ${skipped.join(", ")}`);
  const { failed } = await makeAll(dir.path, entries, env);
  assert.deepEqual(failed, []);
});
