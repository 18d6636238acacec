/**
 * Repositories a sandboxed call plants in the roots (issue #13), with real bubblewrap and real
 * git: a nested repository deeper than the sandbox's walk, a submodule `git add`ed inside
 * `node_modules`, a hook written into a repository the walk did not reach, a `.git` file
 * pointing at a git dir in the temp folder, and a repository `write` makes. After the call what
 * git would run there is renamed aside (the call's result says so), and the person's own git
 * then runs nothing the call left; a plain `git init` the call made is left alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { gitlinksOf } from "../../lib/confinement/planted_repos.ts";
import { testRuntime } from "../helpers.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    env: GIT_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

async function world() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-planted-" }));
  const home = join(base, "home");
  const root = join(base, "root");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(root, { recursive: true });
  await git(root, "init", "-q");
  await git(root, "commit", "-q", "--allow-empty", "-m", "0");
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    ...GIT_ENV,
  };
  const rt = await testRuntime({
    cwd: root,
    env,
    config: {
      shipped_tools: false,
      roots: [root],
      approval: "never",
      sandbox: { mode: "workspace-write" },
    },
  });
  return {
    base,
    root,
    rt,
    async [Symbol.asyncDispose]() {
      closeBodyProcesses();
      await rt[Symbol.asyncDispose]();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

/** A script line that plants a repository at `dir` whose fsmonitor touches `mark`. */
const plant = (dir: string, mark: string) =>
  `git init -q ${dir} && printf '#!/bin/sh\\ntouch ${mark}\\n' > ${dir}/fsmon.sh && ` +
  `chmod +x ${dir}/fsmon.sh && git -C ${dir} config core.fsmonitor ./fsmon.sh`;

Deno.test({
  name: "planted: a nested repository deeper than the walk, made by a call, is disarmed; " +
    "a plain git init is left alone",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const mark = join(w.base, "ran");
    const deep = "a/b/c/d/sub";
    const r = await runTool(w.rt.rt, {
      name: "run",
      args: { command: `${plant(deep, mark)} && git init -q fresh && echo planted` },
    });
    assert.match(r.said, /^planted$/m, r.said);
    assert.match(r.said, /disarmed a git config that sets core\.fsmonitor/, r.said);
    const sub = join(w.root, deep);
    assert.equal(await exists(join(sub, ".git", "config")), false);
    assert.equal(await exists(join(sub, ".git", "config.magi-disarmed")), true);
    await git(sub, "status");
    assert.equal(await exists(mark), false, "the planted fsmonitor ran");
    // A repository with nothing to run is the call's own work: left as it is.
    assert.equal(await exists(join(w.root, "fresh", ".git", "config")), true);
  },
});

Deno.test({
  name: "planted: a submodule added inside node_modules is disarmed; the root's git status " +
    "runs nothing the call left",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const mark = join(w.base, "ran");
    const dir = "node_modules/x";
    const r = await runTool(w.rt.rt, {
      name: "run",
      args: {
        command: `${plant(dir, mark)} && git -C ${dir} -c user.name=t -c user.email=t@t ` +
          `commit -q --allow-empty -m s && git add -f ${dir} && echo added`,
      },
    });
    assert.match(r.said, /^added$/m, r.said);
    // The call's own git ran it inside the sandbox: what counts is the person's git after.
    await Deno.remove(mark).catch(() => {});
    assert.deepEqual(gitlinksOf(join(w.root, ".git")), [dir]);
    assert.match(r.said, /disarmed a git config/, r.said);
    await git(w.root, "status");
    await git(join(w.root, dir), "status");
    assert.equal(await exists(mark), false, "the planted fsmonitor ran");
  },
});

Deno.test({
  name: "planted: a hook written into an existing repository past the walk is disarmed; a " +
    ".git file to a git dir in the temp folder is moved aside",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const old = join(w.root, "p", "q", "r", "old");
    await Deno.mkdir(old, { recursive: true });
    await git(old, "init", "-q");
    const mark = join(w.base, "ran");
    const r = await runTool(w.rt.rt, {
      name: "run",
      args: {
        command:
          `M="$(dirname "$PWD")/ran"; printf '#!/bin/sh\\ntouch '"$M"'\\n' > p/q/r/old/.git/hooks/pre-commit; ` +
          `chmod +x p/q/r/old/.git/hooks/pre-commit; E="$TMPDIR/evil.git"; ` +
          `cp -r p/q/r/old/.git "$E" && git --git-dir="$E" config core.fsmonitor ` +
          `"touch $M" && mkdir -p t/u && echo "gitdir: $E" > t/u/.git && echo done`,
      },
    });
    assert.match(r.said, /^done$/m, r.said);
    assert.equal(await exists(join(old, ".git", "hooks", "pre-commit")), false, r.said);
    assert.equal(await exists(join(old, ".git", "hooks", "pre-commit.magi-disarmed")), true);
    assert.equal(await exists(join(w.root, "t", "u", ".git")), false, r.said);
    assert.match(r.said, /a \.git file to .*evil\.git, which runs programs/);
    await Deno.writeTextFile(join(old, "f"), "x\n");
    await git(old, "add", "f");
    await git(old, "commit", "-qm", "1");
    assert.equal(await exists(mark), false, "the planted hook ran");
  },
});

Deno.test({
  name: "planted: a bare repository made by write, file by file, is disarmed when it becomes one",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const files: [string, string][] = [
      ["w/config", "[core]\n\tbare = true\n\tfsmonitor = ./x.sh\n"],
      ["w/objects/.keep", ""],
      ["w/refs/.keep", ""],
      ["w/HEAD", "ref: refs/heads/main\n"],
    ];
    let said = "";
    for (const [path, content] of files) {
      const res = await runTool(w.rt.rt, { name: "write", args: { path, content } });
      assert.equal(res.is_error, false, res.said);
      said += res.said;
    }
    assert.match(said, /disarmed a git config that sets core\.fsmonitor/, said);
    assert.equal(await exists(join(w.root, "w", "config")), false);
    assert.equal(await exists(join(w.root, "w", "config.magi-disarmed")), true);
  },
});

Deno.test({
  name: "planted: the person's own config and hooks in a deep repository stay, however recent; " +
    "a git dir prepared in one call and moved into place in the next is disarmed",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const mine = join(w.root, "k", "l", "m", "mine");
    await Deno.mkdir(mine, { recursive: true });
    await git(mine, "init", "-q");
    // Set by the person right before the call, in the same second.
    await git(mine, "config", "core.pager", "less -R");
    await git(mine, "config", "alias.up", "!git fetch && git rebase");
    await Deno.writeTextFile(join(mine, ".git", "hooks", "pre-push"), "#!/bin/sh\nexit 0\n");
    const r = await runTool(w.rt.rt, {
      name: "run",
      args: {
        command: `cd k/l/m/mine && echo x > f && git add f && ` +
          `git -c user.name=t -c user.email=t@t commit -qm 1 && cd "$OLDPWD" && ` +
          `mkdir -p staged/dotgit && printf '[core]\\n\\tfsmonitor = ./evil\\n' > ` +
          `staged/dotgit/config && echo ok`,
      },
    });
    assert.match(r.said, /^ok$/m, r.said);
    assert.doesNotMatch(r.said, /disarmed/, r.said);
    assert.equal(await exists(join(mine, ".git", "config")), true);
    assert.equal(await exists(join(mine, ".git", "hooks", "pre-push")), true);
    const moved = await runTool(w.rt.rt, {
      name: "run",
      args: { command: "mv staged/dotgit staged/.git && echo moved" },
    });
    assert.match(moved.said, /^moved$/m, moved.said);
    assert.match(moved.said, /disarmed a git config that sets core\.fsmonitor/, moved.said);
    assert.equal(await exists(join(w.root, "staged", ".git", "config")), false);
  },
});
