/**
 * bwrap's arguments are reused between calls while nothing they were read from changed
 * (`sandbox_reads.ts`), and built again when something appears between two calls: a unix
 * socket, a credential store, a repository whose hooks must stay read-only. Real bwrap. The
 * tests run in a child `deno test` with a temp folder of its own (TMPDIR), so no other
 * process's churn in the shared one decides reuse, and no other test file sees that TMPDIR.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  sandboxArgsBuilt,
  sandboxLauncher,
  sandboxProblem,
  type SandboxScope,
} from "../../lib/confinement/sandbox.ts";
import { probesSettled, setSocketSettledMs } from "../../lib/confinement/sandbox_dead.ts";
import { sessionTempDir } from "../../lib/confinement/session_temp.ts";
import { FAKE_KEY, inside, world } from "./sandbox_world.ts";

const why = await sandboxProblem();
const CHILD = Deno.env.get("MAGI_SANDBOX_REUSE_CHILD") === "1";
/** The tests proper run only in the child. */
const ignore = why !== undefined || !CHILD;

Deno.test({
  name: "sandbox reuse: the tests below, in a child with a temp folder of its own",
  ignore: why !== undefined || CHILD,
  fn: async () => {
    const temp = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-reuse-tmp-" }));
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["test", "-A", "--no-check", new URL(import.meta.url).pathname],
        env: { TMPDIR: temp, MAGI_SANDBOX_REUSE_CHILD: "1", NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, text);
      assert.match(text, /ok \| 8 passed \| 0 failed/, text);
    } finally {
      await Deno.remove(temp, { recursive: true });
    }
  },
});

const PAST = new Date(Date.now() - 60_000);

/**
 * Sets every folder's and file's times under `dir` back (a minute, by default): as if long
 * settled.
 */
function settle(dir: string, when = PAST): void {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) settle(p, when);
    if (!e.isSymlink) Deno.utimeSync(p, when, when);
  }
  Deno.utimeSync(dir, when, when);
}

/**
 * A world (in the child's own temp folder) whose folders all look long settled, the session's
 * temp folder too (made once per process, as magi makes it at start).
 */
async function settledWorld() {
  const w = await world();
  await Deno.mkdir(join(w.home, "run"));
  sessionTempDir();
  settle(w.base);
  settle(Deno.env.get("TMPDIR")!);
  return w;
}

/** The launcher; `unixSockets` true where a test's program connects to sockets (all covered). */
function wrapFor(
  w: { root: string; home: string },
  mode: "read-only" | "workspace-write",
  scope: Partial<SandboxScope> = {},
  unixSockets = true,
) {
  return sandboxLauncher(
    { mode, network: false, denyRead: [], unixSockets },
    { roots: [w.root], home: w.home, hidden: [], ...scope },
    mode,
  );
}

const CONNECT = `import socket,sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(64).decode().strip())
except OSError as e:
    print("refused", e.errno)
`;

for (const mode of ["read-only", "workspace-write"] as const) {
  Deno.test({
    name: `sandbox reuse (${mode}): arguments reused while nothing changed; ` +
      "a socket or a credential store made between two calls is covered by the second",
    ignore,
    sanitizeResources: false,
    fn: async () => {
      await using w = await settledWorld();
      const wrap = wrapFor(w, mode);
      wrap("true", []);
      const built = sandboxArgsBuilt();
      // (The arguments themselves may differ: the sockets the kernel lists are looked at on
      // every call, and other processes' come and go.)
      wrap("true", []);
      assert.equal(sandboxArgsBuilt(), built, "nothing changed: reused");

      // A server's socket appears in a folder of HOME (where an agent or a daemon keeps one),
      // then one in a folder of the temp folder (where tmux keeps its server's).
      const inHome = join(w.home, "run", "agent.sock");
      const tmux = join(Deno.env.get("TMPDIR")!, "tmux-reuse");
      for (const sock of [inHome, join(tmux, "default")]) {
        await Deno.mkdir(join(sock, ".."), { recursive: true });
        // The other mode's listener on the same path may not be unlinked yet (Deno unlinks a
        // closed listener's file later): a server removes a stale one before it binds.
        await Deno.remove(sock).catch(() => {});
        const listener = Deno.listen({ transport: "unix", path: sock });
        (async () => {
          for await (const c of listener) {
            await c.write(new TextEncoder().encode("reached\n")).catch(() => {});
            c.close();
          }
        })().catch(() => {});
        try {
          const r = await inside(wrap, `python3 -c "$PY" "${sock}"`, { env: { PY: CONNECT } });
          assert.match(r.out, /refused/, `${sock}: ${r.out}${r.err}`);
          assert.doesNotMatch(r.out, /reached/);
        } finally {
          listener.close();
        }
      }
      assert.ok(sandboxArgsBuilt() > built, "built again");

      // A credential store appears.
      await Deno.mkdir(join(w.home, ".kube"));
      await Deno.writeTextFile(join(w.home, ".kube", "config"), FAKE_KEY);
      const r = await inside(wrap, `cat "${w.home}/.kube/config" 2>&1; true`);
      assert.doesNotMatch(r.out, /fake-key/, r.out);
    },
  });
}

Deno.test({
  name: "sandbox reuse: a repository made between two calls has its hooks kept read-only",
  ignore,
  fn: async () => {
    await using w = await settledWorld();
    const wrap = wrapFor(w, "workspace-write");
    // The first call's bwrap makes the missing `.magi` it keeps read-only (in the root and the
    // session's temp folder): built again once.
    await inside(wrap, "true");
    settle(w.base);
    settle(sessionTempDir());
    await inside(wrap, "true");
    const built = sandboxArgsBuilt();
    await inside(wrap, "true");
    assert.equal(sandboxArgsBuilt(), built, "nothing changed: reused");
    const repo = join(w.root, "sub");
    const init = await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
    assert.ok(init.success);
    const r = await inside(
      wrap,
      `echo evil > "${repo}/.git/hooks/pre-commit" 2>/dev/null && echo planted; ` +
        `echo x >> "${repo}/.git/config" 2>/dev/null && echo config-changed; ` +
        `echo ok > "${repo}/file" && echo wrote`,
    );
    assert.match(r.out, /wrote/, `${r.out}${r.err}`);
    assert.doesNotMatch(r.out, /planted|config-changed/, r.out);
  },
});

Deno.test({
  name: "sandbox reuse: arguments read from a folder changed within a clock tick are not kept",
  ignore,
  fn: async () => {
    await using w = await settledWorld();
    const wrap = wrapFor(w, "read-only");
    wrap("true", []);
    // Changed just now: a change in the same tick would not move its time, so no reuse.
    await Deno.writeTextFile(join(w.home, "run", "fresh"), "");
    const built = sandboxArgsBuilt();
    wrap("true", []);
    wrap("true", []);
    assert.equal(sandboxArgsBuilt(), built + 2);
  },
});

/** A git command's success, with its output on failure. */
async function git(args: string[], env: Record<string, string> = {}): Promise<void> {
  const out = await new Deno.Command("git", { args, env, stdout: "piped", stderr: "piped" })
    .output();
  assert.ok(out.success, `git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

const GIT_ID = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@e",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@e",
  GIT_CONFIG_NOSYSTEM: "1",
};

Deno.test({
  name: "sandbox reuse: a named pipe made in the shared temp folder between two calls is " +
    "covered by the second (its scan reused only while unchanged)",
  ignore,
  fn: async () => {
    await using w = await settledWorld();
    const temp = Deno.env.get("TMPDIR")!;
    const later = join(temp, "pipes-later");
    // Unix sockets refused (the default): the temp folder's scan is reused between calls.
    const wrap = wrapFor(w, "workspace-write", {}, false);
    try {
      await inside(wrap, "true");
      await inside(wrap, "true");
      // A folder there first, settled; then a pipe made inside it (the temp folder's own
      // listing does not change: only the folder's does).
      await Deno.mkdir(later);
      settle(temp, new Date(Date.now() - 20_000));
      await inside(wrap, "true");
      const fifo = await new Deno.Command("mkfifo", { args: [join(later, "pipe")] }).output();
      assert.ok(fifo.success);
      const r = await inside(wrap, `[ -p "${later}/pipe" ] && echo reachable || echo covered`);
      assert.match(r.out, /covered/, `${r.out}${r.err}`);
    } finally {
      await Deno.remove(later, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: a repository of the shared temp folder is read-only; given as a root it stays " +
    "writable but for its config and hooks, call after call",
  ignore,
  fn: async () => {
    await using w = await settledWorld();
    const other = join(Deno.env.get("TMPDIR")!, "other-repo");
    await git(["init", "-q", other]);
    try {
      // The shared temp folder is no root: nothing of another program's repository changes.
      const closed = await inside(
        wrapFor(w, "workspace-write"),
        `echo x >> "${other}/.git/config" 2>/dev/null && echo config-changed; ` +
          `echo ok > "${other}/work.txt" 2>/dev/null && echo wrote`,
      );
      assert.doesNotMatch(closed.out, /config-changed|wrote/, closed.out);
      const wrap = wrapFor(w, "workspace-write", { roots: [w.root, other] });
      // A checkout in the temp folder the person gave as a root, worked in call after call.
      for (let call = 0; call < 2; call++) {
        const r = await inside(
          wrap,
          `echo evil > "${other}/.git/hooks/pre-commit" 2>/dev/null && echo planted; ` +
            `echo x >> "${other}/.git/config" 2>/dev/null && echo config-changed; ` +
            `mv "${other}/.git" "${other}/.git-moved" 2>/dev/null && echo moved; ` +
            `echo ok > "${other}/work-${call}.txt" && echo wrote`,
        );
        assert.match(r.out, /wrote/, `${r.out}${r.err}`);
        assert.doesNotMatch(r.out, /planted|config-changed|moved/, r.out);
      }
    } finally {
      await Deno.remove(other, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: a root that is a worktree of a temp folder's repository still commits there",
  ignore,
  fn: async () => {
    await using w = await settledWorld();
    const temp = Deno.env.get("TMPDIR")!;
    const main = join(temp, "main-repo");
    const tree = join(temp, "tree");
    await git(["init", "-q", main]);
    await git(["-C", main, "commit", "-q", "--allow-empty", "-m", "one"], GIT_ID);
    await git(["-C", main, "worktree", "add", "-q", tree]);
    try {
      // Both are roots: the shared temp folder is none (a worktree's common dir outside the
      // roots is read-only, as anywhere).
      const wrap = wrapFor({ root: tree, home: w.home }, "workspace-write", {
        roots: [tree, main],
      });
      const r = await inside(
        wrap,
        `git -C "${tree}" commit -q --allow-empty -m two && echo committed; ` +
          `echo x >> "${main}/.git/config" 2>/dev/null && echo config-changed`,
        { env: { ...GIT_ID, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: w.home } },
      );
      assert.match(r.out, /committed/, `${r.out}${r.err}`);
      assert.doesNotMatch(r.out, /config-changed/, r.out);
    } finally {
      await Deno.remove(tree, { recursive: true });
      await Deno.remove(main, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: a temp folder's socket nobody listens on is left uncovered; a live one is not",
  ignore,
  sanitizeResources: false,
  fn: async () => {
    await using w = await settledWorld();
    setSocketSettledMs(0);
    const temp = Deno.env.get("TMPDIR")!;
    const dead = join(temp, "gone-session", "approve.sock");
    const live = join(temp, "live-server", "s.sock");
    await Deno.mkdir(join(dead, ".."));
    await Deno.mkdir(join(live, ".."));
    // Deno removes a socket file as its listener closes: a second name for it stays, dead.
    const old = Deno.listen({ transport: "unix", path: `${dead}.live` });
    Deno.linkSync(`${dead}.live`, dead);
    old.close();
    const listener = Deno.listen({ transport: "unix", path: live });
    (async () => {
      for await (const c of listener) {
        await c.write(new TextEncoder().encode("reached\n")).catch(() => {});
        c.close();
      }
    })().catch(() => {});
    try {
      // Settled at a time of its own: a folder whose times match an earlier reading's within
      // the second (Deno gives the change time in whole seconds) would be taken as unchanged.
      settle(temp, new Date(Date.now() - 30_000));
      const wrap = wrapFor(w, "workspace-write");
      const first = wrap("true", []).args;
      assert.ok(first.includes(join(dead, "..")), "covered until it was looked at");
      await probesSettled();
      const args = wrap("true", []).args;
      assert.ok(!args.includes(join(dead, "..")), "dead: no mount");
      assert.ok(args.includes(join(live, "..")), "live: covered");
      const r = await inside(wrap, `python3 -c "$PY" "${live}"`, { env: { PY: CONNECT } });
      assert.match(r.out, /refused/, `${r.out}${r.err}`);
    } finally {
      listener.close();
      setSocketSettledMs(10_000);
      await Deno.remove(join(dead, ".."), { recursive: true });
      await Deno.remove(join(live, ".."), { recursive: true });
    }
  },
});
