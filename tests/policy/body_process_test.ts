/**
 * File builtins' bodies in a mount namespace of the roots (`body_process.ts`): a body with no
 * check of its own, following a symlink out of the root, meets a file system that holds only
 * the roots — where the same body in a Worker (Deno's permissions alone, which follow symlinks
 * inside an allowed folder) reads and writes outside. Real bwrap, real Deno processes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bodyPermissions, runBody } from "../../lib/sources/builtins/body_worker.ts";
import {
  bodyProcessFailure,
  bodyProcessProblem,
  closeBodyProcesses,
  runInBodyProcess,
  writeProtects,
} from "../../lib/sources/builtins/body_process.ts";
import type { BuiltinResult } from "../../lib/sources/builtins/builtin.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const why = await bodyProcessProblem();

/** A body with no checks: reads `path`, or writes `text` to it. Plain JS, no imports. */
const UNCHECKED = `export const unchecked = {
  name: "unchecked",
  description: "x\\nx",
  parameters: { type: "object" },
  run: async (args) => {
    if (typeof args.text === "string") {
      await Deno.writeTextFile(args.path, args.text);
      return { said: "wrote" };
    }
    return { said: await Deno.readTextFile(args.path) };
  },
};
`;

Deno.test({
  name: "a body following a symlink out of the root reaches nothing in a body process " +
    "(and does in a Worker)",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "project");
    const outside = join(dir.path, "outside");
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
    await Deno.writeTextFile(join(root, "inside.txt"), "inside\n");
    await Deno.writeTextFile(join(root, "unchecked.js"), UNCHECKED);
    // A folder of the root swapped for a symlink to the outside one, left that way.
    await Deno.symlink(outside, join(root, "d"));
    await using t = await testRuntime({
      cwd: root,
      config: { shipped_tools: false, roots: [root] },
    });
    const permissions = bodyPermissions(t.rt.policy, { write: true });
    const job = (args: Record<string, unknown>) => ({
      kind: "builtin" as const,
      module: new URL(`file://${join(root, "unchecked.js")}`).href,
      export: "unchecked",
      args,
      ctx: { cwd: root, env: {}, timeoutMs: 20_000, roots: [root] },
    });
    const run = { timeoutMs: 20_000, said: () => Promise.resolve() };
    const inProcess = async (args: Record<string, unknown>): Promise<BuiltinResult> => {
      const access = { read: permissions.read, write: permissions.write };
      const r = await runInBodyProcess(job(args), { ...run, access });
      assert.ok(r, "the body process started");
      return r;
    };
    try {
      assert.equal((await inProcess({ path: join(root, "inside.txt") })).said, "inside\n");
      const read = await inProcess({ path: join(root, "d", "secret.txt") });
      assert.equal(read.isError, true);
      assert.match(read.note!, /NotFound/, read.note);
      const wrote = await inProcess({ path: join(root, "d", "planted.txt"), text: "x" });
      assert.equal(wrote.isError, true, wrote.note);
      // Nothing of the host but the roots, the system's libraries and magi's code is there.
      for (const path of ["/etc/passwd", join(Deno.env.get("HOME") ?? "/root", ".bashrc")]) {
        const away = await inProcess({ path });
        assert.equal(away.isError, true);
      }
      // The same body in a Worker: Deno's permissions follow the symlink.
      const worker = await runBody(job({ path: join(root, "d", "secret.txt") }), {
        ...run,
        permissions,
      });
      assert.equal(worker.said, "OUTSIDE-SECRET\n", "the test has teeth");
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "a body process's job past its time limit ends it; the next job starts a new one",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir();
    await Deno.writeTextFile(
      join(dir.path, "slow.js"),
      `export const slow = { name: "slow", description: "x\\nx", parameters: {},
        run: (args) => args.hang ? new Promise(() => {}) : Promise.resolve({ said: "quick" }) };`,
    );
    const job = (hang: boolean) => ({
      kind: "builtin" as const,
      module: new URL(`file://${join(dir.path, "slow.js")}`).href,
      export: "slow",
      args: { hang },
      ctx: { cwd: dir.path, env: {}, timeoutMs: 100, roots: [dir.path] },
    });
    const run = {
      access: { read: [dir.path], write: false as const },
      said: () => Promise.resolve(),
    };
    try {
      // The first job waits for the process to start, well within its limit.
      assert.equal(
        (await runInBodyProcess(job(false), { ...run, timeoutMs: 20_000 }))?.said,
        "quick",
      );
      const hung = await runInBodyProcess(job(true), { ...run, timeoutMs: 100 });
      assert.equal(hung?.isError, true);
      assert.match(hung!.note!, /ran past 0.1 s and was stopped/);
      assert.equal(
        (await runInBodyProcess(job(false), { ...run, timeoutMs: 20_000 }))?.said,
        "quick",
      );
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "a writing body's namespace keeps .git/hooks and .git/config read-only, " +
    "whatever symlink leads there",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "project");
    await Deno.mkdir(join(root, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(root, ".git", "config"), "[core]\n");
    await Deno.writeTextFile(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(root, "unchecked.js"), UNCHECKED);
    // A folder swapped for a symlink to the hooks, inside the root.
    await Deno.symlink(join(root, ".git", "hooks"), join(root, "d"));
    const env = { HOME: join(dir.path, "home") };
    const readOnly = writeProtects([root], env);
    assert.ok(readOnly.includes(join(root, ".git", "hooks")), readOnly.join(" "));
    const job = (args: Record<string, unknown>) => ({
      kind: "builtin" as const,
      module: new URL(`file://${join(root, "unchecked.js")}`).href,
      export: "unchecked",
      args,
      ctx: { cwd: root, env: {}, timeoutMs: 20_000, roots: [root] },
    });
    const run = {
      access: { read: [root], write: [root], readOnly },
      timeoutMs: 20_000,
      said: () => Promise.resolve(),
    };
    try {
      const hook = await runInBodyProcess(
        job({ path: join(root, "d", "pre-commit"), text: "x" }),
        run,
      );
      assert.equal(hook?.isError, true, hook?.said as string);
      const config = await runInBodyProcess(
        job({ path: join(root, ".git", "config"), text: "[core]\n\tfsmonitor = evil\n" }),
        run,
      );
      assert.equal(config?.isError, true);
      const fine = await runInBodyProcess(job({ path: join(root, "ok.txt"), text: "ok" }), run);
      assert.equal(fine?.said, "wrote", fine?.note);
      assert.deepEqual([...Deno.readDirSync(join(root, ".git", "hooks"))], []);
      assert.equal(Deno.readTextFileSync(join(root, ".git", "config")), "[core]\n");
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "a job cancelled while its body process starts does not send later jobs to the Worker",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir();
    await Deno.writeTextFile(
      join(dir.path, "quick.js"),
      `export const quick = { name: "quick", description: "x\\nx", parameters: {},
        run: () => Promise.resolve({ said: "quick" }) };`,
    );
    const job = {
      kind: "builtin" as const,
      module: new URL(`file://${join(dir.path, "quick.js")}`).href,
      export: "quick",
      args: {},
      ctx: { cwd: dir.path, env: {}, timeoutMs: 20_000, roots: [dir.path] },
    };
    const run = {
      access: { read: [dir.path], write: false as const },
      timeoutMs: 20_000,
      said: () => Promise.resolve(),
    };
    try {
      closeBodyProcesses();
      const cancel = new AbortController();
      const first = runInBodyProcess(job, { ...run, signal: cancel.signal });
      cancel.abort();
      assert.match((await first)?.note ?? "", /cancelled/);
      assert.equal(bodyProcessFailure(), undefined);
      // undefined would mean "no body process can start": the body would go to its Worker.
      assert.equal((await runInBodyProcess(job, run))?.said, "quick");
    } finally {
      closeBodyProcesses();
    }
  },
});
