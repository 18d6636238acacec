/**
 * The shared system temp folder is never writable by a model's calls (issue #13): it holds
 * other programs' repositories, hooks and sockets, thousands of entries no per-call scan can
 * cover. The session's own temp folder is the default root and `$TMPDIR` in the
 * `workspace-write` sandbox instead. Real bubblewrap, real git; HOME, the XDG folders and the
 * checkout are made here, and the victim repository really lies in the system temp folder,
 * among 300 other folders.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { sessionTempDir } from "../../lib/confinement/session_temp.ts";
import { systemTempDir } from "../../lib/core/temp.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { testRuntime } from "../helpers.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

/** HOME with its XDG folders and a checkout beside it, in a new folder. */
async function world() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-stemp-" }));
  const home = join(base, "home");
  const project = join(base, "project");
  await Deno.mkdir(home);
  await Deno.mkdir(project);
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    ...GIT_ENV,
  };
  return {
    base,
    project,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, env: GIT_ENV, stdout: "null" }).output();
  assert.ok(out.success, `git ${args.join(" ")} failed`);
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/**
 * A runtime that acts without asking (workspace-write), with the default roots. The judge's
 * rule against paths outside the roots is off: these tests are about the sandbox behind it.
 */
function acting(w: Awaited<ReturnType<typeof world>>, cwd: string, mode = "workspace-write") {
  return testRuntime({
    cwd,
    env: w.env,
    config: {
      shipped_tools: false,
      approval: "never",
      sandbox: { mode },
      policy: { disable: ["outside-roots"] },
    },
  });
}

Deno.test({
  name: "sandbox: a repository in the system temp folder among 300 others stays untouched; " +
    "$TMPDIR is the session's own temp folder, kept between calls and readable with read",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const temp = await Deno.realPath(systemTempDir());
    const tag = crypto.randomUUID().slice(0, 8);
    // Sorted first, beside 300 folders: more than any scan's budget would reach.
    const victim = join(temp, `aaa-victim-${tag}`);
    const crowd = Array.from({ length: 300 }, (_, i) => join(temp, `magi-crowd-${tag}-${i}`));
    const newFile = join(temp, `magi-newfile-${tag}`);
    try {
      for (const d of crowd) await Deno.mkdir(d);
      await Deno.mkdir(victim);
      await git(victim, "init", "-q");
      const config = join(victim, ".git", "config");
      const before = await Deno.readTextFile(config);
      await using t = await acting(w, w.project);
      const run = (command: string) => runTool(t.rt, { name: "run", args: { command } });

      const fsmonitor = await run(`printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> ${config}`);
      assert.equal(fsmonitor.is_error, true, fsmonitor.said);
      assert.match(fsmonitor.said, /Read-only file system/);
      const hook = await run(`echo 'touch PWNED' > ${join(victim, ".git", "hooks", "pre-commit")}`);
      assert.equal(hook.is_error, true, hook.said);
      const made = await run(`echo x > ${newFile}`);
      assert.equal(made.is_error, true, made.said);
      assert.match(made.said, /Read-only file system/);
      assert.equal(await Deno.readTextFile(config), before);
      assert.equal(await exists(join(victim, ".git", "hooks", "pre-commit")), false);
      assert.equal(await exists(newFile), false);

      // $TMPDIR: the session's own temp folder, writable, and there on the next call.
      const session = sessionTempDir();
      const wrote = await run(`echo kept > "$TMPDIR/x" && echo "tmp=$TMPDIR"`);
      assert.equal(wrote.is_error, false, wrote.said);
      assert.match(wrote.said, new RegExp(`tmp=${session}\\n`));
      const again = await run(`cat "$TMPDIR/x" && mktemp`);
      assert.equal(again.is_error, false, again.said);
      assert.match(again.said, new RegExp(`^kept\\n${session}/tmp\\.`));
      const read = await runTool(t.rt, { name: "read", args: { path: join(session, "x") } });
      assert.equal(read.is_error, false, read.said);
      assert.match(read.said, /kept/);
      // A magi inside the sandbox (`magi builtin`) shares the session's temp folder as a root
      // (it reads; a write would ask, and a program in `run` reaches no approvals socket).
      const shim = await run(`magi builtin read "$TMPDIR/x"`);
      assert.equal(shim.is_error, false, shim.said);
      assert.match(shim.said, /kept/);

      // The file builtins' roots are the start folder and the session's temp folder.
      const outside = join(temp, `magi-written-${tag}`);
      const write = await runTool(t.rt, { name: "write", args: { path: outside, content: "x" } });
      assert.equal(write.is_error, true, write.said);
      assert.match(
        write.said,
        new RegExp(`Cannot write "${outside}": outside the allowed roots \\(.*"${session}"`),
      );
      assert.equal(await exists(outside), false);
    } finally {
      closeBodyProcesses();
      for (const d of [victim, newFile, ...crowd]) {
        await Deno.remove(d, { recursive: true }).catch(() => {});
      }
    }
  },
});

Deno.test({
  name: "sandbox: what write put in the session's temp folder a read-only run reads, " +
    "and cannot change",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const session = sessionTempDir();
    const file = join(session, `note-${crypto.randomUUID().slice(0, 8)}.txt`);
    try {
      {
        await using t = await acting(w, w.project);
        const write = await runTool(t.rt, {
          name: "write",
          args: { path: file, content: "hello" },
        });
        assert.equal(write.is_error, false, write.said);
      }
      await using t = await acting(w, w.project, "read-only");
      const cat = await runTool(t.rt, { name: "run", args: { command: `cat ${file}` } });
      assert.equal(cat.is_error, false, cat.said);
      assert.match(cat.said, /^hello/);
      const change = await runTool(t.rt, { name: "run", args: { command: `echo x >> ${file}` } });
      assert.equal(change.is_error, true, change.said);
      assert.equal(await Deno.readTextFile(file), "hello");
    } finally {
      closeBodyProcesses();
      await Deno.remove(file).catch(() => {});
    }
  },
});

Deno.test({
  name: "sandbox: a checkout in the system temp folder given as the start folder stays " +
    "writable, its .git/config does not",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    // `world` lies in the system temp folder: so does this checkout.
    await git(w.project, "init", "-q");
    await using t = await acting(w, w.project);
    const run = (command: string) => runTool(t.rt, { name: "run", args: { command } });
    const edit = await run("echo made > made.txt && cat made.txt");
    assert.equal(edit.is_error, false, edit.said);
    assert.equal(await Deno.readTextFile(join(w.project, "made.txt")), "made\n");
    const config = await run("echo '[core]' >> .git/config");
    assert.equal(config.is_error, true, config.said);
    const write = await runTool(t.rt, {
      name: "write",
      args: { path: join(w.project, "w.txt"), content: "w" },
    });
    assert.equal(write.is_error, false, write.said);
    closeBodyProcesses();
  },
});
