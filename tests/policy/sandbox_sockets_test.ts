/**
 * Unix sockets and the sandbox (SPEC S8.3), through `run` as a call makes it: a socket is a
 * way out however deep it lies and in whatever folder (a tmux server's would take keystrokes
 * into the person's shell), in both modes; and sockets coming and going while calls start
 * make none of them fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { tempDir, testRuntime } from "../helpers.ts";
import { outsideDir } from "./sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const tmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!tmux) console.log("tmux socket tests skipped: no tmux");

const MODES = ["read-only", "workspace-write"] as const;
const SESSION = "magi-sock-test";

/** Starts a tmux server on `sock` whose one pane runs a shell in `cwd`. */
async function tmuxServer(sock: string, cwd: string): Promise<void> {
  const out = await new Deno.Command("tmux", {
    args: ["-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", SESSION, "-c", cwd, "sh"],
    env: { TMUX: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

async function tmuxKill(sock: string): Promise<void> {
  await new Deno.Command("tmux", { args: ["-S", sock, "kill-server"], stderr: "null" }).output();
}

/** Waits until `path` holds `n` lines (the panes' shells write it). */
async function fileLines(path: string, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text.split("\n").filter(Boolean).length >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${path} never got ${n} lines`);
}

Deno.test({
  name: "sandbox: a tmux server's socket deep in the temp folder, a root, HOME or an outside " +
    "root takes no keystrokes from run, in either mode",
  ignore: why !== undefined || !tmux,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "project");
    const home = join(dir.path, "home");
    // Deeper than any folder walk reads, in each kind of place.
    const deepTemp = join(dir.path, "elsewhere", "a", "b", "c");
    const deepRoot = join(root, "x", "y", "z");
    const deepHome = join(home, "a", "b", "c", "d");
    // A folder outside the temp folder (/var/tmp, say), given as a second root.
    const outside = await outsideDir();
    const deepOutside = join(outside, "p", "q");
    const socks = [deepTemp, deepRoot, deepHome, deepOutside].map((d) => join(d, "s"));
    for (const s of socks) await Deno.mkdir(join(s, ".."), { recursive: true });
    const typed = join(dir.path, "typed");
    try {
      for (const s of socks) await tmuxServer(s, dir.path);
      // The servers answer outside the sandbox.
      for (const s of socks) {
        const has = await new Deno.Command("tmux", { args: ["-S", s, "has-session"] }).output();
        assert.ok(has.success, s);
      }
      // By default no unix socket can be made; with unix_sockets each is covered.
      for (const [mode, unix_sockets] of MODES.flatMap((m) => [[m, false], [m, true]] as const)) {
        // The paths in variables: the judge asks about a line it cannot read (the person's
        // call, approved), and the sandbox is what stands between it and the servers.
        const env = Object.fromEntries(socks.map((s, i) => [`S${i}`, s]));
        await using t = await testRuntime({
          cwd: root,
          env: { HOME: home, TYPED: typed, ...env },
          config: { shipped_tools: false, roots: [root, outside], sandbox: { mode, unix_sockets } },
        });
        const line = socks.map((_, i) =>
          `tmux -S "$S${i}" send-keys -t ${SESSION} "echo typed >> $TYPED" Enter && echo reached`
        ).join("; ") + "; echo tried";
        const r = await runTool(t.rt, { name: "run", args: { command: line }, caller: "person" });
        assert.match(r.said, /tried/, `${mode}: ${r.said}`);
        assert.doesNotMatch(r.said, /reached/, `${mode}: ${r.said}`);
      }
      // Each pane handles keys in order: once it has run a line sent from outside now, a line
      // typed from inside before would have run too.
      const marker = join(dir.path, "marker");
      for (const s of socks) {
        const sent = await new Deno.Command("tmux", {
          args: ["-S", s, "send-keys", "-t", SESSION, `echo handled >> ${marker}`, "Enter"],
        }).output();
        assert.ok(sent.success, s);
      }
      await fileLines(marker, socks.length);
      await assert.rejects(Deno.stat(typed));
    } finally {
      for (const s of socks) await tmuxKill(s);
      await Deno.remove(outside, { recursive: true }).catch(() => {});
    }
  },
});

/**
 * A program that makes and removes sockets (each in a folder of its own, made and removed with
 * it) under `dir` as fast as it can, each listening a few milliseconds and answering
 * "theirs-ok BORN" (when it was bound, in milliseconds since the epoch); it prints "churning"
 * once the first is up and runs until killed.
 */
const CHURN = `
import os, random, shutil, socket, sys, time
base = sys.argv[1]
n = 0
while True:
    n += 1
    d = os.path.join(base, "c%d" % n, "sub")
    os.makedirs(d)
    p = os.path.join(d, "s")
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    s.listen(8)
    s.setblocking(False)
    born = b"theirs-ok %d\\n" % int(time.time() * 1000)
    if n == 1:
        print("churning", flush=True)
    end = time.monotonic() + random.uniform(0.0005, 0.02)
    while time.monotonic() < end:
        try:
            c, _ = s.accept()
            c.sendall(born)
            c.close()
        except BlockingIOError:
            time.sleep(0.0005)
    s.close()
    os.unlink(p)
    shutil.rmtree(os.path.join(base, "c%d" % n), ignore_errors=True)
`;

/** Connects to every socket found under the folder given and prints what it answers. */
const CONNECT_ALL = `
import os, socket, sys
for top, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(top, f)
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(p); print(s.recv(64).decode().strip())
        except OSError:
            pass
print("walked")
`;

Deno.test({
  name: "sandbox: sockets made and removed all the time in a root fail no call and are " +
    "reached by none bound before the call (120 calls, both modes, unix_sockets true and false)",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "project");
    const churn = join(root, "churn");
    const home = join(dir.path, "home");
    await Deno.mkdir(churn, { recursive: true });
    await Deno.mkdir(home);
    const child = new Deno.Command("python3", {
      args: ["-c", CHURN, churn],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      assert.match((await reader.read()).value ?? "", /churning/);
      reader.releaseLock();
      for (const [mode, unix_sockets] of MODES.flatMap((m) => [[m, true], [m, false]] as const)) {
        await using t = await testRuntime({
          cwd: root,
          env: { HOME: home, PY: CONNECT_ALL },
          config: { shipped_tools: false, roots: [root], sandbox: { mode, unix_sockets } },
        });
        // By default (no unix socket can be made) nothing is covered: a few calls suffice.
        for (let i = 0; i < (unix_sockets ? 50 : 10); i++) {
          const command = i % 5 === 0 ? `python3 -c "$PY" ${churn}` : "echo ran";
          const start = Date.now();
          const r = await runTool(t.rt, { name: "run", args: { command }, caller: "person" });
          assert.equal(r.is_error, false, `${mode} call ${i}: ${r.said}`);
          assert.match(r.said, i % 5 === 0 ? /walked/ : /ran/, `${mode} call ${i}: ${r.said}`);
          // A socket bound before the call started was covered; one bound after the sandbox
          // was set up, in a folder it can see, is not (README: what the sandbox misses).
          const born = [...r.said.matchAll(/theirs-ok (\d+)/g)].map((m) => Number(m[1]));
          assert.ok(born.every((b) => b > start), `${mode} call ${i}: ${r.said} (start ${start})`);
          // None at all when no unix socket can be made.
          if (!unix_sockets) assert.equal(born.length, 0, `${mode} call ${i}: ${r.said}`);
        }
      }
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    }
  },
});
