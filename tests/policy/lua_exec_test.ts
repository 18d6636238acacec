/**
 * Lua bodies under the policy (SPEC S8.1, S8.2): they run in a Worker whose Deno permissions
 * come from the policy, and each `magi.exec` is judged as a `run` of the same command.
 */
import assert from "node:assert/strict";
import { pidsWith } from "../process/helpers.ts";
import { join } from "node:path";
import { allowedPrograms } from "../../lib/policy/decide.ts";
import { luaConfinement, shellWord } from "../../lib/policy/lua_exec.ts";
import { readArgv, readLine } from "../../lib/policy/shell.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { LuaWorkerHost } from "../../lib/exec/lua/worker_host.ts";
import type { Invocation } from "../../lib/core/types.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const BODIES = join(TESTDATA, "policy", "bodies");

async function setup(dir: string) {
  const root = join(dir, "project");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "inside.txt"), "inside\n");
  await Deno.writeTextFile(join(dir, "outside.txt"), "outside\n");
  return await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root], lua_dirs: [BODIES] },
  });
}

Deno.test("magi.exec is judged like run: allowed by rule, asked, denied outside the roots", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  const leaky = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    runTool(t.rt, { name: "leaky_lua", args, ...extra });

  // `ls *` is a default allow rule: the Worker starts it under its own permission.
  const listed = await leaky({ program: "ls", arg: root });
  assert.equal(listed.is_error, false, listed.said);
  assert.match(listed.said, /inside\.txt/);

  // `touch` is no rule's: a model's call with no one to ask is refused, and nothing is made.
  const made = join(root, "made.txt");
  const asked = await leaky({ program: "touch", arg: made });
  assert.equal(asked.is_error, true);
  assert.match(
    asked.said,
    /magi\.exec: "touch": denied \(no person to approve it.*\) by the policy — ask by no rule: no rule allows it: `touch /,
  );
  assert.equal(await exists(made), false);

  // A person who says no, then yes.
  const no = await leaky({ program: "touch", arg: made }, { approve: () => Promise.resolve("no") });
  assert.match(no.said, /"touch": refused by the person/);
  assert.equal(await exists(made), false);
  const seen: string[] = [];
  const yes = await leaky({ program: "touch", arg: made }, {
    approve: (r: { tool: string; verdict: { reason: string } }) => {
      seen.push(`${r.tool}: ${r.verdict.reason}`);
      return Promise.resolve("yes");
    },
  });
  assert.equal(yes.is_error, false, yes.said);
  assert.equal(await exists(made), true);
  // The person is told which tool starts what: `leaky_lua (magi.exec): … `touch …``.
  assert.match(seen[0], /^leaky_lua \(magi\.exec\): .*`touch /);

  // The person's own call (`magi call`) approves an ask: magi starts the program the Worker
  // may not start itself.
  const made2 = join(root, "made2.txt");
  const own = await leaky({ program: "touch", arg: made2 }, { caller: "person" });
  assert.equal(own.is_error, false, own.said);
  assert.equal(await exists(made2), true);

  // The person's own call approves an ask, but a path outside the roots is denied
  // — here one the body builds itself, so the call's arguments do not show it.
  const rel = join(dir.path, "outside.txt").slice(1);
  const outside = await runTool(t.rt, { name: "cat_from_root", args: { rel }, caller: "person" });
  assert.equal(outside.is_error, true);
  assert.match(
    outside.said,
    /"cat": denied by the policy — deny by rule "outside-roots" \(default\)/,
  );
  assert.ok(!outside.said.includes("outside\n"));
  const inside = await runTool(t.rt, {
    name: "cat_from_root",
    args: { rel: join(root, "inside.txt").slice(1) },
  });
  assert.deepEqual([inside.is_error, inside.said], [false, "inside"]);
});

Deno.test("a word of a magi.exec cannot smuggle shell syntax past the judge", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  // One argument holding a whole line: it is one word to ls, and judged as one word.
  const r = await runTool(t.rt, {
    name: "leaky_lua",
    args: { program: "ls", arg: "x; rm -rf /" },
  });
  // ls was given one file name that does not exist: it printed nothing, and nothing ran.
  assert.deepEqual([r.is_error, r.said], [false, ""]);
  assert.equal(shellWord("x; rm -rf /"), `'x; rm -rf /'`);
  assert.equal(shellWord("it's"), `'it'\\''s'`);
  assert.equal(shellWord("A=b"), `'A=b'`);
  assert.equal(shellWord("--stat"), "--stat");
});

Deno.test("a judge that wrongly allows everything still meets Deno's refusal in the Lua Worker", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  const real = luaConfinement(() => t.rt.policy);
  // A bug in the policy code: every exec allowed by rule, as the program's real path.
  const host = new LuaWorkerHost({
    memoryBytes: 32 << 20,
    confine: {
      programs: real.programs,
      judge: (job) =>
        Promise.resolve({
          program: job.program.startsWith("/") ? job.program : Deno.realPathSync(
            `/usr/bin/${job.program}`,
          ),
          byPerson: false,
        }),
    },
    print: () => {},
    onEnd: () => {},
  });
  try {
    const file = join(BODIES, "leaky.lua");
    const loaded = await host.loadFile(file, await Deno.readTextFile(file), 5000);
    const id = loaded.decls.find((d) => d.name === "leaky_lua")!.id!;
    const call = {
      args: {},
      cwd: root,
      env: { PATH: Deno.env.get("PATH")! },
      timeoutMs: 10_000,
      signal: new AbortController().signal,
    } as unknown as Invocation;
    assert.ok(!allowedPrograms(t.rt.policy).some((p) => p.endsWith("/id")));
    const refused = await host.run(id, { program: "id", arg: "-u" }, call);
    assert.ok("error" in refused, JSON.stringify(refused));
    assert.match(refused.error, /Cannot start "id": not allowed by magi's permissions/);
    const listed = await host.run(id, { program: "ls", arg: root }, call);
    assert.ok("said" in listed, JSON.stringify(listed));
    assert.match(listed.said, /inside\.txt/);
  } finally {
    host.end();
  }
});

Deno.test("the shipped branch runs for a model with no one to ask: git branch --show-current is read-only", async () => {
  await using dir = await tempDir();
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: dir.path, stdout: "null", stderr: "null" }).output();
  await git("init", "-q", "-b", "judged");
  await using t = await testRuntime({ cwd: dir.path });
  const r = await runTool(t.rt, { name: "branch", args: {} });
  assert.deepEqual([r.is_error, r.said], [false, "judged"]);
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a shell builtin's name in magi.exec is the program PATH finds, judged like any program", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(join(root, "bin"), { recursive: true });
  // A folder inside the roots on PATH, where `echo` is really git (which the policy lets
  // the Worker start for `git status`): bash would run its builtin echo, magi.exec runs git.
  const git = Deno.realPathSync(
    new TextDecoder().decode(new Deno.Command("which", { args: ["git"] }).outputSync().stdout)
      .trim(),
  );
  await Deno.symlink(git, join(root, "bin", "echo"));
  await using t = await testRuntime({
    cwd: root,
    env: { PATH: `${join(root, "bin")}:${Deno.env.get("PATH")}` },
    config: { shipped_tools: false, roots: [root], lua_dirs: [BODIES] },
  });
  const r = await runTool(t.rt, {
    name: "exec_argv",
    args: { program: "echo", argv: ["-c", "alias.x=!touch made", "x"] },
  });
  assert.equal(r.is_error, true);
  assert.match(r.said, /"echo": denied .*`echo` resolves to ".*git", not ".*echo"/);
  assert.equal(await exists(join(root, "made")), false);
  // The real echo still runs by rule.
  await using plain = await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root], lua_dirs: [BODIES] },
  });
  const hi = await runTool(plain.rt, {
    name: "exec_argv",
    args: { program: "echo", argv: ["hi"] },
  });
  assert.deepEqual([hi.is_error, hi.said], [false, "hi"]);
});

Deno.test("a magi.exec whose call ends while a person is asked never starts", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  // The person answers "yes" only once the call has ended (or after 20 s, which fails).
  const asking = (made: string, extra: { timeout_seconds?: number }, signal?: AbortSignal) => {
    let answered = false;
    let answer!: (a: "yes") => void;
    const late = setTimeout(() => {
      answered = true;
      answer("yes");
    }, 20_000);
    const result = runTool(t.rt, {
      name: "exec_argv",
      args: { program: "touch", argv: [made], ...extra },
      approve: () => new Promise((r) => answer = r),
      signal,
    });
    return result.then(async (r) => {
      clearTimeout(late);
      assert.equal(answered, false, "the call waited for the person's answer");
      answer("yes");
      await new Promise((r) => setTimeout(r, 200));
      return r;
    });
  };
  const cancel = new AbortController();
  const cancelled = asking("a.txt", {}, cancel.signal);
  setTimeout(() => cancel.abort(), 300);
  const c = await cancelled;
  assert.equal(c.is_error, true);
  assert.match(c.said, /magi\.exec: the call was cancelled while the policy decided/);
  assert.equal(await exists(join(root, "a.txt")), false);

  const timedOut = await asking("b.txt", { timeout_seconds: 0.5 });
  assert.equal(timedOut.is_error, true);
  assert.match(
    timedOut.said,
    /magi\.exec: the call's time limit was reached while the policy decided/,
  );
  assert.equal(await exists(join(root, "b.txt")), false);
});

Deno.test("an exec's words are read as the quoted run line would be, without the shell parser", () => {
  const cases = [
    ["ls", "a b", "it's", "$(rm -rf /)", "`id`", "x\ny", "*", "~", "~/.ssh", "A=b", "-la"],
    ["git", "-C", "..", "log", "--output=/tmp/x", "{a,b}", "back\\slash", '"q"'],
    ["sh", "-c", "rm -rf ~; echo $HOME"],
    ["env", "PATH=/tmp", "cat", "/etc/passwd"],
    ["timeout", "5", "find", ".", "-delete"],
    ["cat", "", "--", "-"],
  ];
  for (const argv of cases) {
    const line = argv.map(shellWord).join(" ");
    // Only `shell` differs: with no shell, a builtin's name is a program (`echo`).
    const bare = (l: ReturnType<typeof readLine>) => ({
      ...l,
      commands: l.commands.map(({ shell: _, ...c }) => c),
    });
    assert.deepEqual(bare(readArgv(argv)), bare(readLine(line)), line);
  }
});

Deno.test("a refused magi.exec names the body's own line, also through pcall", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  // argv.lua calls pcall(magi.exec, …) on its line 14 and returns the message.
  const r = await runTool(t.rt, { name: "exec_argv", args: { program: "touch", argv: ["x"] } });
  assert.match(r.said, /^\S*argv\.lua:14: magi\.exec: "touch": denied/);
});

Deno.test("a rule allowing a program by its absolute path lets a Lua body start it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "f.txt"), "b\na\n");
  const which = new Deno.Command("which", { args: ["sort"] }).outputSync();
  const sort = Deno.realPathSync(new TextDecoder().decode(which.stdout).trim());
  await using t = await testRuntime({
    cwd: root,
    config: {
      shipped_tools: false,
      roots: [root],
      lua_dirs: [BODIES],
      policy: { rules: [{ tool: "run", command: [`${sort} *`], decision: "allow" }] },
    },
  });
  assert.ok(allowedPrograms(t.rt.policy).includes(sort));
  const r = await runTool(t.rt, {
    name: "exec_from_root",
    args: { rel: sort.slice(1), argv: ["f.txt"] },
  });
  assert.deepEqual([r.is_error, r.said], [false, "a\nb"]);
});

Deno.test("a program is started where PATH finds it, so a multi-call binary sees its name", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const lib = join(dir.path, "lib");
  const bin = join(dir.path, "bin");
  await Deno.mkdir(root);
  await Deno.mkdir(lib);
  await Deno.mkdir(bin);
  // Like busybox or NixOS's coreutils: one program, told apart by the name it is started as.
  await Deno.writeTextFile(join(lib, "multi"), '#!/bin/sh\necho "started as ${0##*/}"\n');
  await Deno.chmod(join(lib, "multi"), 0o755);
  await Deno.symlink(join(lib, "multi"), join(bin, "applet"));
  await using t = await testRuntime({
    cwd: root,
    env: { PATH: `${bin}:${Deno.env.get("PATH")}` },
    config: {
      shipped_tools: false,
      roots: [root],
      lua_dirs: [BODIES],
      policy: { rules: [{ tool: "run", command: ["applet *"], decision: "allow" }] },
    },
  });
  const r = await runTool(t.rt, { name: "exec_argv", args: { program: "applet", argv: ["x"] } });
  assert.deepEqual([r.is_error, r.said], [false, "started as applet"]);
});

Deno.test("a body stuck in C ends its Worker, the programs it started and the other calls in it", async () => {
  await using dir = await tempDir();
  await using t = await setup(dir.path);
  const root = t.rt.roots[0];
  const marker = `follow-${crypto.randomUUID()}.txt`;
  await Deno.writeTextFile(join(root, marker), "");
  // `tail -f` is read-only (allowed by rule): the Worker starts it, and it runs until stopped.
  const following = runTool(t.rt, {
    name: "exec_argv",
    args: { program: "tail", argv: ["-f", marker], timeout_seconds: 60 },
  });
  while (!running(marker)) await new Promise((r) => setTimeout(r, 50));
  const stuck = await runTool(t.rt, { name: "stuck_in_c", args: { timeout_seconds: 1 } });
  assert.equal(stuck.is_error, true);
  assert.match(
    stuck.said,
    /the body did not stop at its time limit \(1 s\); its Lua Worker was ended/,
  );
  const other = await following;
  assert.equal(other.is_error, true);
  assert.match(other.said, /its Lua Worker was ended: another call in it did not stop/);
  // Ended: its sandbox goes down with it (TERM, then KILL after a grace), so wait for that.
  for (let i = 0; i < 100 && running(marker); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(running(marker), false);
  // The next call gets a fresh Worker.
  const next = await runTool(t.rt, {
    name: "exec_argv",
    args: { program: "echo", argv: ["again"] },
  });
  assert.deepEqual([next.is_error, next.said], [false, "again"]);
});

/** Whether a process with `word` in its command line runs. */
/** Whether a live process (not a zombie) has `word` in its command line. */
function running(word: string): boolean {
  return pidsWith(word).length > 0;
}
