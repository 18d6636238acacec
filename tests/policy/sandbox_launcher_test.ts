/**
 * The sandbox launcher with real bubblewrap (SPEC S8.3): credential stores hidden in every
 * mode, read-only writes only its private temp, workspace-write writes the roots but not
 * `.git/config`, `.git/hooks` or `.magi`, no network unless asked, no signal to a process
 * outside, `deny_read` hides a path.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  filterDir,
  findBwrap,
  sandboxLauncher,
  type SandboxMode,
  sandboxProblem,
  type SandboxScope,
  type SandboxSettings,
  scratchDir,
} from "../../lib/confinement/sandbox.ts";
import { privateSocketDir, socketsParent } from "../../lib/exec/unix_socket.ts";
import { FAKE_KEY, inside, world } from "./sandbox_world.ts";
import { TESTDATA, testRuntime } from "../helpers.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

const MODES = ["read-only", "workspace-write"] as const;

function settings(more: Partial<SandboxSettings> = {}): SandboxSettings {
  return { mode: "workspace-write", network: false, denyRead: [], ...more };
}

function launcher(
  w: { root: string; home: string },
  mode: Exclude<SandboxMode, "off">,
  more: Partial<SandboxSettings> = {},
  scope: Partial<SandboxScope> = {},
) {
  return sandboxLauncher(
    settings(more),
    { roots: [w.root], home: w.home, hidden: [], ...scope },
    mode,
  );
}

for (const homeInRoot of [false, true]) {
  Deno.test({
    name: `sandbox: no mode reads the credential stores (HOME ${
      homeInRoot ? "inside a root" : "under the temp folder"
    })`,
    ignore,
    fn: async () => {
      await using w = await world({ homeInRoot });
      // A symlinked store is hidden where it points too.
      await Deno.mkdir(join(w.outside, "kube"));
      await Deno.writeTextFile(join(w.outside, "kube", "config"), FAKE_KEY);
      await Deno.symlink(join(w.outside, "kube"), join(w.home, ".kube"));
      for (const mode of MODES) {
        const r = await inside(
          launcher(w, mode),
          `cd "$H"; cat .ssh/id_ed25519 .aws/credentials .netrc .kube/config ` +
            `.claude/.credentials.json .vault-token .pgpass ` +
            `"${w.outside}/kube/config"; ls -A .ssh; ` +
            `cp -r .ssh "${w.root}/stolen" 2>/dev/null; cat "${w.root}"/stolen/* 2>/dev/null; true`,
          { env: { H: w.home } },
        );
        assert.ok(!r.out.includes("fake-key"), `${mode}: ${r.out}`);
        // The private key's own file is still on the host, untouched.
        assert.match(await Deno.readTextFile(join(w.home, ".ssh", "id_ed25519")), /fake-key/);
      }
    },
  });
}

Deno.test({
  name: "sandbox: read-only writes nothing but its private temp folder",
  ignore,
  fn: async () => {
    await using w = await world();
    const r = await inside(
      launcher(w, "read-only"),
      `{ echo x > "${w.root}/made"; echo x > "${w.outside}/made"; } 2>&1; ` +
        `echo private > "$TMPDIR/own" && cat "$TMPDIR/own"; ls "${w.root}"`,
    );
    assert.match(r.out, /Read-only file system/);
    assert.match(r.out, /^private$/m);
    await assert.rejects(Deno.stat(join(w.root, "made")));
    await assert.rejects(Deno.stat(join(w.outside, "made")));
    // The root (under the system temp folder, which stays readable) is visible, read-only.
    await Deno.writeTextFile(join(w.root, "seen"), "");
    const again = await inside(launcher(w, "read-only"), `ls "${w.root}"; ls "$TMPDIR"`);
    assert.match(again.out, /^seen$/m);
    assert.ok(!again.out.includes("own"), "the private temp folder is new for each call");
  },
});

Deno.test({
  name: "sandbox: workspace-write writes the roots but not .git/config, .git/hooks or .magi",
  ignore,
  fn: async () => {
    await using w = await world();
    const git = new Deno.Command("git", { args: ["init", "-q", w.root] });
    assert.ok((await git.output()).success);
    await Deno.mkdir(join(w.root, ".magi"));
    await Deno.writeTextFile(join(w.root, ".magi", "config.jsonc"), "{}\n");
    // A nested repository without a hooks folder.
    const nested = join(w.root, "sub", "inner");
    assert.ok((await new Deno.Command("git", { args: ["init", "-q", nested] }).output()).success);
    await Deno.remove(join(nested, ".git", "hooks"), { recursive: true });
    const config = await Deno.readTextFile(join(w.root, ".git", "config"));
    const r = await inside(
      launcher(w, "workspace-write"),
      `cd "${w.root}"; echo ok > made && cat made; ` +
        `echo '[core] fsmonitor = evil' >> .git/config; ` +
        `echo evil > .git/hooks/pre-commit; echo '{}' > .magi/config.jsonc; ` +
        `mkdir -p "${nested}/.git/hooks"; echo evil > "${nested}/.git/hooks/post-checkout"; ` +
        `echo evil > "${nested}/.git/config"; echo x > "${w.outside}/made"; true`,
    );
    assert.match(r.out, /^ok$/m);
    // Nor by moving .git, the repository or a folder above it aside and making a new one.
    const swap = await inside(
      launcher(w, "workspace-write"),
      `cd "${w.root}"; mv .git .git-old; mv sub sub-old; mv sub/inner sub/inner-old; ` +
        `rm -rf .git sub; git init -q . ; git config core.fsmonitor evil; ` +
        `mkdir -p x/.git; mv x/.git .git; true`,
    );
    assert.match(swap.err, /busy|Read-only/);
    assert.equal(await Deno.readTextFile(join(w.root, ".git", "config")), config);
    await assert.rejects(Deno.stat(join(w.root, ".git", "hooks", "pre-commit")));
    assert.equal(await Deno.readTextFile(join(w.root, ".magi", "config.jsonc")), "{}\n");
    await assert.rejects(Deno.stat(join(nested, ".git", "hooks", "post-checkout")));
    assert.doesNotMatch(await Deno.readTextFile(join(nested, ".git", "config")), /evil/);
    await assert.rejects(Deno.stat(join(w.outside, "made")));
  },
});

Deno.test({
  name: "sandbox: a repository's own fsmonitor and hooks run inside it and change nothing outside",
  ignore,
  fn: async () => {
    await using w = await world();
    const repo = join(w.root, "repo");
    const git = (...args: string[]) =>
      new Deno.Command("git", { args, cwd: repo, stdout: "null", stderr: "null" }).output();
    await Deno.mkdir(repo);
    await git("init", "-q");
    await Deno.writeTextFile(join(repo, "a.txt"), "a\n");
    const evil = `#!/bin/sh\necho pwned > "${w.outside}/pwned"\n` +
      `echo '[alias] st = !touch ${w.outside}/alias' >> "${repo}/.git/config"\n` +
      `echo pwned > "${w.home}/.bashrc"\n`;
    await Deno.writeTextFile(join(w.root, "evil.sh"), evil, { mode: 0o755 });
    await Deno.writeTextFile(join(repo, ".git", "hooks", "pre-commit"), evil, { mode: 0o755 });
    await git("config", "core.fsmonitor", join(w.root, "evil.sh"));
    const config = await Deno.readTextFile(join(repo, ".git", "config"));
    await Deno.writeTextFile(join(w.home, ".bashrc"), "# mine\n");
    const r = await inside(
      // HOME inside the root: its start-up files stay read-only too.
      launcher({ root: w.base, home: w.home }, "workspace-write"),
      `cd "${repo}" && git status --short && git add a.txt && ` +
        `git -c user.name=t -c user.email=t@t commit -qm one; echo "commit=$?"`,
    );
    assert.match(r.out, /commit=/);
    await assert.rejects(Deno.stat(join(w.outside, "pwned")));
    assert.equal(await Deno.readTextFile(join(repo, ".git", "config")), config);
    assert.equal(await Deno.readTextFile(join(w.home, ".bashrc")), "# mine\n");
  },
});

Deno.test({
  name: "sandbox: no network unless asked — a listener on the host's loopback is out of reach",
  ignore,
  fn: async () => {
    await using w = await world();
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("reached\n"),
    );
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${server.addr.port} || exit 7; ` +
      `printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`;
    const run = (wrap: ReturnType<typeof launcher>) =>
      new Deno.Command(wrap("/bin/bash", ["-c", probe]).program, {
        args: wrap("/bin/bash", ["-c", probe]).args,
        stdout: "piped",
        stderr: "null",
      }).output();
    for (const mode of MODES) {
      const closed = await run(launcher(w, mode));
      assert.equal(closed.code, 7, mode);
      const open = await run(launcher(w, mode, { network: true }));
      assert.match(new TextDecoder().decode(open.stdout), /reached/, mode);
    }
  },
});

Deno.test({
  name: "sandbox: a process outside cannot be signalled or seen from inside",
  ignore,
  fn: async () => {
    await using w = await world();
    const sleeper = new Deno.Command("sleep", { args: ["300"], stdout: "null" }).spawn();
    try {
      for (const mode of MODES) {
        const r = await inside(
          launcher(w, mode),
          `kill -9 ${sleeper.pid}; echo "kill=$?"; ls /proc | grep -c '^[0-9]'`,
        );
        assert.match(r.out, /kill=1/, r.out + r.err);
        const stat = await Deno.readTextFile(`/proc/${sleeper.pid}/stat`);
        assert.match(stat.split(") ")[1], /^[SR]/, "the sleeper is still alive");
        // Only the sandbox's own processes are in its /proc.
        assert.ok(Number(r.out.trim().split("\n").at(-1)) < 10, r.out);
      }
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.status;
    }
  },
});

Deno.test({
  name: "sandbox: deny_read and magi's own files are hidden; visible folders and sockets stay",
  ignore,
  fn: async () => {
    await using w = await world();
    const secret = join(w.outside, "secret.txt");
    await Deno.writeTextFile(secret, "hidden-by-deny-read\n");
    await Deno.writeTextFile(join(w.home, "notes.txt"), "hidden-by-tilde\n");
    const state = join(w.outside, "state", "magi");
    const tools = join(state, "tools");
    await Deno.mkdir(tools, { recursive: true });
    await Deno.writeTextFile(join(state, "session.jsonl"), "hidden-session\n");
    await Deno.writeTextFile(join(tools, "tool"), "visible-tool\n");
    const sock = join(w.base, "approvals.sock");
    // Answering every connection: another session's look for dead sockets may come first.
    const listener = answering(sock, "socket");
    try {
      const r = await inside(
        // Unix sockets allowed: the call's own stays in reach (see the tests below).
        launcher(w, "read-only", { denyRead: [secret, "~/notes.txt"], unixSockets: true }, {
          hidden: [state],
          visible: [tools],
          sockets: [sock],
        }),
        `cat "${secret}" "${w.home}/notes.txt" "${state}/session.jsonl" "${tools}/tool"; ` +
          `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); ` +
          `s.connect(sys.argv[1]); print(s.recv(64).decode().strip())" "${sock}"`,
      );
      assert.ok(!r.out.includes("hidden-"), r.out);
      assert.match(r.out, /visible-tool/);
      assert.match(r.out, /socket-ok/, r.err);
    } finally {
      listener.close();
    }
  },
});

/** A unix socket that answers "NAME-ok" to each connection. */
function answering(path: string, name: string) {
  const listener = Deno.listen({ transport: "unix", path });
  (async () => {
    for await (const conn of listener) {
      await conn.write(new TextEncoder().encode(`${name}-ok\n`)).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  return listener;
}

const CONNECT = `import socket,sys
for p in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(p); print(s.recv(64).decode().strip())
    except OSError as e:
        print("refused", e.errno)
`;

Deno.test({
  name: "sandbox: with unix_sockets true only the call's own unix sockets are reachable (not a " +
    "tmux server's, say); by default none is (EPERM)",
  ignore,
  fn: async () => {
    await using w = await world();
    // Where tmux keeps its server's socket: a folder of its own right in the temp folder.
    const tmux = await Deno.realPath(await Deno.makeTempDir({ prefix: "tmux-magi-test-" }));
    const theirs = join(tmux, "default");
    const ours = join(w.base, "approve.sock");
    const a = answering(theirs, "theirs");
    const b = answering(ours, "ours");
    try {
      for (const mode of MODES) {
        for (const unixSockets of [true, false]) {
          const r = await inside(
            launcher(w, mode, { unixSockets }, { sockets: [ours] }),
            `python3 -c "$PY" "${theirs}" "${ours}"`,
            { env: { PY: CONNECT } },
          );
          if (unixSockets) assert.match(r.out, /ours-ok/, `${mode}: ${r.out}${r.err}`);
          else assert.equal(r.out, "refused 1\nrefused 1\n", `${mode}: ${r.err}`);
          assert.doesNotMatch(r.out, /theirs-ok/, mode);
        }
      }
    } finally {
      a.close();
      b.close();
      await Deno.remove(tmux, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: other sessions' sockets in the shared sockets folder stay out of reach, " +
    "under one mount (unix_sockets true)",
  ignore,
  fn: async () => {
    await using w = await world();
    const sessions = [0, 1, 2].map(() => privateSocketDir("magi-approve-test-"));
    const [ours, ...theirs] = sessions.map((d) => join(d, "approve.sock"));
    const servers = [answering(ours, "ours"), ...theirs.map((t) => answering(t, "theirs"))];
    try {
      assert.ok(sessions.every((d) => d.startsWith(socketsParent()! + "/")), sessions.join());
      for (const mode of MODES) {
        const wrap = launcher(w, mode, { unixSockets: true }, { sockets: [ours] });
        const r = await inside(wrap, `python3 -c "$PY" ${[ours, ...theirs].join(" ")}`, {
          env: { PY: CONNECT },
        });
        assert.match(r.out, /ours-ok/, `${mode}: ${r.out}${r.err}`);
        assert.doesNotMatch(r.out, /theirs-ok/, mode);
        // One empty folder over the sockets' folder, not one per session.
        const args = wrap("true", []).args;
        assert.ok(!sessions.some((d) => args.includes(d)), `${mode}: ${args.join(" ")}`);
      }
    } finally {
      for (const s of servers) s.close();
      for (const d of sessions) await Deno.remove(d, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: network as a list of domains goes through the proxy, which lets only those by",
  ignore,
  fn: async () => {
    await using w = await world();
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => new Response(`reached ${new URL(req.url).pathname}\n`),
    );
    const port = server.addr.port;
    for (const mode of MODES) {
      const r = await inside(
        launcher(w, mode, { network: [`localhost:${port}`, "*.example.invalid"] }),
        `curl -s http://localhost:${port}/plain; curl -s -p http://localhost:${port}/tunnel; ` +
          `curl -s http://127.0.0.1:${port}/by-address; ` +
          `curl -s --noproxy '*' http://localhost:${port}/direct || echo direct-refused`,
      );
      assert.match(r.out, /reached \/plain/, `${mode}: ${r.out}${r.err}`);
      assert.match(r.out, /reached \/tunnel/, mode);
      assert.match(r.out, /127\.0\.0\.1 is not an allowed domain/, mode);
      assert.doesNotMatch(r.out, /by-address|reached \/direct/, mode);
      assert.match(r.out, /direct-refused/, mode);
    }
  },
});

Deno.test("sandbox: why no sandbox can start is one line; bwrap is never taken from a root", async () => {
  assert.equal(
    await sandboxProblem("/nonexistent"),
    'bwrap is not on PATH (Debian package "bubblewrap")',
  );
  await using w = await world();
  const bin = join(w.root, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "bwrap"), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  const found = findBwrap(`${bin}:/usr/bin:/bin`, [w.root]);
  assert.notEqual(found, join(bin, "bwrap"));
  const wrap = launcher(w, "read-only", {}, { path: `${bin}:/usr/bin:/bin` });
  assert.notEqual(wrap("true", []).program, join(bin, "bwrap"));
});

Deno.test({
  name: "sandbox: a worktree's .git file and its common dir's config stay read-only",
  ignore,
  fn: async () => {
    await using w = await world();
    const main = join(w.root, "main");
    const tree = join(w.root, "tree");
    const git = (cwd: string, ...args: string[]) =>
      new Deno.Command("git", { args, cwd, stdout: "null", stderr: "null" }).output();
    await Deno.mkdir(main);
    await git(main, "init", "-q");
    await git(
      main,
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@t",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "0",
    );
    assert.ok((await git(main, "worktree", "add", "-q", tree)).success);
    const dotGit = await Deno.readTextFile(join(tree, ".git"));
    const config = await Deno.readTextFile(join(main, ".git", "config"));
    // Only the worktree is a root; the main repository is writable as part of the temp folder,
    // deeper than its scan: the worktree's .git file leads to it.
    const r = await inside(
      launcher({ root: tree, home: w.home }, "workspace-write"),
      `cd "${tree}"; echo "gitdir: /nowhere" > .git; git config core.fsmonitor evil; ` +
        `echo evil > "$(git rev-parse --git-common-dir)/hooks/post-checkout"; echo ok > made; true`,
    );
    assert.equal(await Deno.readTextFile(join(tree, ".git")), dotGit, r.err);
    assert.equal(await Deno.readTextFile(join(main, ".git", "config")), config);
    await assert.rejects(Deno.stat(join(main, ".git", "hooks", "post-checkout")));
    assert.equal(await Deno.readTextFile(join(tree, "made")), "ok\n");
  },
});

Deno.test({
  name: "sandbox: the kernel's keyrings are out of reach in every mode (seccomp)",
  ignore,
  fn: async () => {
    await using w = await world();
    const deno = Deno.execPath();
    // In the root: the read-only sandbox shows the temp folder (a checkout may lie there) only
    // where a call needs it.
    const script = join(w.root, "keyring.ts");
    await Deno.copyFile(join(TESTDATA, "sandbox", "keyring.ts"), script);
    const read = ["run", "-A", "--no-config", script, "read", "magi-test"];
    // A session keyring holding a key, inherited by the command given after it.
    const holding = async (program: string, args: string[]) => {
      const out = await new Deno.Command(deno, {
        args: [
          "run",
          "-A",
          "--no-config",
          script,
          "add",
          "magi-test",
          "KEYRING-SECRET",
          program,
          ...args,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    };
    const outside = await holding(deno, read);
    if (/add refused/.test(outside)) {
      console.log(`keyring test skipped: no keyring here (${outside.trim()})`);
      return;
    }
    assert.match(outside, /KEYRING-SECRET/);
    for (const mode of MODES) {
      const { program, args } = launcher(w, mode)(deno, read);
      const inside = await holding(program, args);
      assert.doesNotMatch(inside, /KEYRING-SECRET/, mode);
      assert.match(inside, /refused errno=1\b/, `${mode}: ${inside}`);
    }
  },
});

Deno.test({
  name: "sandbox: no sandboxed call can replace the seccomp filter a later call starts with",
  ignore,
  fn: async () => {
    await using w = await world();
    // As a session's calls get it: magi's scratch folder bound writable.
    const scope = { scratch: [scratchDir()] };
    for (const mode of MODES) {
      const { program, args } = launcher(w, mode, {}, scope)("/bin/sh", ["-c", "true"]);
      // `/bin/sh -c 'exec "$0" "$@" 9<FILE' bwrap …`: the filter's file, quoted in.
      const file = /9<'([^']+)'/.exec(args[1] ?? "")?.[1];
      assert.ok(program === "/bin/sh" && file, `${program} ${args.join(" ")}`);
      const before = await Deno.readFile(file);
      const tried = launcher(w, mode, {}, scope)("/bin/sh", [
        "-c",
        `printf x > '${file}' 2>/dev/null && echo REPLACED; ` +
        `printf x > '${dirname(file)}/planted.bpf' 2>/dev/null && echo PLANTED; echo done`,
      ]);
      const out = await new Deno.Command(tried.program, { args: tried.args, stdout: "piped" })
        .output();
      const said = new TextDecoder().decode(out.stdout);
      assert.match(said, /done/, `${mode}: ${said}`);
      assert.doesNotMatch(said, /REPLACED|PLANTED/, `${mode}: ${said}`);
      assert.deepEqual(await Deno.readFile(file), before, mode);
    }
  },
});

Deno.test({
  name:
    "sandbox: the file builtins refuse the seccomp filters too, even with the temp folder a root",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const temp = await Deno.realPath(Deno.env.get("TMPDIR") || "/tmp");
    await using t = await testRuntime({ config: { roots: [temp], approval: "never" } });
    const file = join(filterDir(), "seccomp.bpf");
    const before = await Deno.readFile(file).catch(() => undefined);
    const r = await runTool(t.rt, { name: "write", args: { path: file, content: "x" } });
    assert.equal(r.is_error, true, r.said);
    assert.deepEqual(await Deno.readFile(file).catch(() => undefined), before);
  },
});
