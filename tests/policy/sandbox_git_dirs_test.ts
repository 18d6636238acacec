/**
 * What git runs later (SPEC S8.3), with real bubblewrap and git: the sandbox keeps a
 * worktree's and a submodule's git dir (`.git/worktrees/X`, `.git/modules/X`) read-only like
 * `.git/config`; the mount points it makes for a missing `.magi` or `.git/hooks` stay
 * on the host, empty, because removing one would detach a second sandbox's read-only cover; and a repository a sandboxed program made during the
 * session is not run by a "read-only" git line — the judge asks, and `--auto` does not
 * approve it while a deny rule covers `run`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  sandboxLauncher,
  sandboxProblem,
  type SandboxScope,
  trackLaunches,
} from "../../lib/confinement/sandbox.ts";
import { loadPolicy, type Policy } from "../../lib/policy/decide.ts";
import { judge } from "../../lib/policy/facts.ts";
import { inside, world } from "./sandbox_world.ts";

const why = await sandboxProblem();
const ignore = why !== undefined;
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    env: GIT_ENV,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

function writable(w: { root: string; home: string }, more: Partial<SandboxScope> = {}) {
  return sandboxLauncher(
    { mode: "workspace-write", network: false, denyRead: [] },
    { roots: [w.root], home: w.home, hidden: [], ...more },
    "workspace-write",
  );
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

Deno.test({
  name: "sandbox: a worktree's and a submodule's git dirs stay read-only like .git/config",
  ignore,
  fn: async () => {
    await using w = await world();
    const repo = join(w.root, "repo");
    await Deno.mkdir(repo);
    await git(repo, "init", "-q");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "0");
    await git(repo, "worktree", "add", "-q", join(w.base, "tree"));
    // A submodule's git dir, nested one level (`modules/lib/a`), as `git submodule` lays it out.
    const mod = join(repo, ".git", "modules", "lib", "a");
    await git(w.root, "init", "-q", "--bare", mod);
    const wt = join(repo, ".git", "worktrees", "tree");
    const before = {
      commondir: await Deno.readTextFile(join(wt, "commondir")),
      gitdir: await Deno.readTextFile(join(wt, "gitdir")),
      modConfig: await Deno.readTextFile(join(mod, "config")),
    };
    const r = await inside(
      writable(w),
      `cd "${repo}"; echo /elsewhere > "${wt}/commondir"; echo /elsewhere > "${wt}/gitdir"; ` +
        `echo '[core] fsmonitor = evil' >> "${mod}/config"; ` +
        `echo evil > "${mod}/hooks/post-checkout"; ` +
        `mv "${mod}" "${mod}-old"; mv .git/modules .git/modules-old; echo ok > made; true`,
    );
    assert.equal(await Deno.readTextFile(join(repo, "made")), "ok\n", r.err);
    assert.equal(await Deno.readTextFile(join(wt, "commondir")), before.commondir);
    assert.equal(await Deno.readTextFile(join(wt, "gitdir")), before.gitdir);
    assert.equal(await Deno.readTextFile(join(mod, "config")), before.modConfig);
    assert.equal(await exists(join(mod, "hooks", "post-checkout")), false);
  },
});

Deno.test({
  name:
    "sandbox: the mount points made for a missing .magi and .git/hooks stay, empty, so a second sandbox keeps its cover",
  ignore,
  fn: async () => {
    await using w = await world();
    await git(w.root, "init", "-q");
    await Deno.remove(join(w.root, ".git", "hooks"), { recursive: true });
    const launches = trackLaunches(writable(w));
    const r = await inside(
      launches.wrap!,
      `cd "${w.root}"; ls -d .magi .git/hooks; mkdir .magi/tools; ` +
        `echo evil > .git/hooks/pre-commit; echo ok > made; true`,
    );
    assert.match(r.out, /^\.magi$/m, r.err);
    assert.match(r.err, /Read-only file system/);
    launches.release();
    // Left empty: a second sandbox using them as mount points keeps its read-only cover.
    assert.deepEqual([...Deno.readDirSync(join(w.root, ".magi"))], []);
    assert.deepEqual([...Deno.readDirSync(join(w.root, ".git", "hooks"))], []);
    assert.equal(await Deno.readTextFile(join(w.root, "made")), "ok\n");
  },
});

/** The verdict on a `git status` line in `cwd`, for a session that started at `since`. */
function gitStatus(policy: Policy, cwd: string, since: number) {
  return judge({ ...policy, since }, {
    tool: "run",
    source: "builtin",
    args: { command: "git status" },
    cwd,
  });
}

Deno.test({
  name:
    "a repository a sandboxed program made during the session is not run by a read-only git line",
  ignore,
  fn: async () => {
    await using w = await world();
    await git(w.root, "init", "-q");
    const policy = loadPolicy(undefined, "test", [w.root], {
      HOME: w.home,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    });
    // A repository that was there before the session (its start: now, and later) is git's.
    const later = Date.now() + 60_000;
    assert.equal(gitStatus(policy, w.root, later).decision, "allow");
    // A sandboxed program makes a repository whose config names a program git would start.
    const sub = join(w.root, "sub");
    const r = await inside(
      writable(w),
      `git init -q "${sub}" && git -C "${sub}" config core.fsmonitor "touch pwned" && echo made`,
      { env: { ...GIT_ENV, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } },
    );
    assert.match(r.out, /made/, r.err);
    const started = Date.now() - 60_000;
    const v = gitStatus(policy, sub, started);
    assert.equal(v.decision, "ask");
    assert.match(v.reason, /made or changed during this session/);
    // `--auto` does not approve it while a deny rule covers run (the judge cannot read it).
    assert.match(v.unread ?? "", /during this session/);
    // A `.git` file pointing at a git dir made during the session: the same.
    const linked = join(w.root, "linked");
    await Deno.mkdir(linked);
    await Deno.writeTextFile(join(linked, ".git"), `gitdir: ${join(sub, ".git")}\n`);
    assert.equal(gitStatus(policy, linked, started).decision, "ask");
  },
});
