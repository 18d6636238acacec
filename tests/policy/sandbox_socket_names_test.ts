/**
 * A unix socket whose path holds a tab, a newline or spaces, deeper than any folder walk reads:
 * the kernel's list (`/proc/net/unix`) prints the path raw, and every reading of it that could
 * be meant is covered, so none stays in reach. With real bubblewrap and real listening sockets.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { boundSockets } from "../../lib/confinement/bound_sockets.ts";
import { sandboxLauncher, sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { inside } from "./sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);

const HEAD = "Num       RefCount Protocol Flags    Type St Inode Path\n";
const rec = (inode: number, path: string) =>
  `0000000000000000: 00000002 00000000 00010000 0001 01 ${inode} ${path}\n`;

Deno.test("boundSockets: tabs, runs of spaces and newlines in a path; a forged record", () => {
  const text = HEAD + rec(11, "/a/tab\tx.sock") + rec(12, "/a/two  spaces ") +
    rec(13, "/a/nl\nx.sock") +
    // A path whose second line looks like a record of its own.
    rec(14, "/a/f\n" + rec(15, "/a/decoy").trimEnd()) +
    "000000009146ba97: 00000003 00000000 00000000 0001 03 7499563\n" +
    rec(16, "@abstract");
  const got = boundSockets(text);
  for (
    const p of [
      "/a/tab\tx.sock",
      "/a/two  spaces ",
      "/a/nl\nx.sock",
      "/a/f\n" + rec(15, "/a/decoy").trimEnd(),
      "/a/decoy",
    ]
  ) assert.ok(got.includes(p), JSON.stringify(p));
  assert.ok(!got.some((p) => p.startsWith("@")));
});

Deno.test({
  name: "sandbox: sockets named with a tab, a newline or spaces, deep in a writable folder, " +
    "are covered in both modes",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-socknames-" }));
    const root = join(base, "root");
    const deep = join(root, "a", "b", "c", "d");
    await Deno.mkdir(deep, { recursive: true });
    const names = ["tab\tx.sock", "nl\nx.sock", "sp  ace.sock"];
    const listeners = names.map((n) =>
      Deno.listen({ transport: "unix", path: join(deep, n) }) as Deno.UnixListener
    );
    try {
      for (const mode of ["read-only", "workspace-write"] as const) {
        const wrap = sandboxLauncher(
          { mode: "workspace-write", network: false, denyRead: [], unixSockets: true },
          { roots: [root], home: join(base, "home"), hidden: [] },
          mode,
        );
        const env = Object.fromEntries(names.map((n, i) => [`S${i}`, join(deep, n)]));
        const line = names.map((_, i) => `[ -S "$S${i}" ] && echo "socket ${i}"`).join("; ") +
          `; ls "${deep}" | wc -l`;
        const r = await inside(wrap, line, { env });
        assert.doesNotMatch(r.out, /socket/, `${mode}: ${r.out} ${r.err}`);
        assert.match(r.out, /\d/, `${mode}: ${r.out} ${r.err}`);
      }
    } finally {
      for (const l of listeners) l.close();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "sandbox: a host program's named pipe (FIFO) in HOME or the temp folder is covered in " +
    "both modes",
  ignore: why !== undefined,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-fifo-" }));
    const home = join(base, "home");
    const root = join(base, "root");
    await Deno.mkdir(join(home, "app"), { recursive: true });
    await Deno.mkdir(root);
    const fifos = [join(home, "app", "ctl"), join(base, "ctl")];
    try {
      for (const f of fifos) {
        const made = await new Deno.Command("mkfifo", { args: [f] }).output();
        assert.ok(made.success);
      }
      for (const mode of ["read-only", "workspace-write"] as const) {
        const wrap = sandboxLauncher(
          { mode: "workspace-write", network: false, denyRead: [], unixSockets: true },
          { roots: [root], home, hidden: [] },
          mode,
        );
        const r = await inside(
          wrap,
          `[ -p "$F0" ] && echo "pipe 0"; [ -p "$F1" ] && echo "pipe 1"; echo tried`,
          { env: { F0: fifos[0], F1: fifos[1] } },
        );
        assert.match(r.out, /tried/, `${mode}: ${r.err}`);
        // (The temp folder's own is out of sight in read-only: its temp folder is private.)
        assert.doesNotMatch(r.out, /pipe/, `${mode}: ${r.out}`);
      }
    } finally {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});
