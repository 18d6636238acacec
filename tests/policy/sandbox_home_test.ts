/**
 * HOME inside a root (magi started in `~`), with real bubblewrap and real processes: the file
 * builtins refuse what the sandbox hides (one list), the body process's namespace hides it too,
 * HOME's start-up files that do not exist yet cannot be made, and what magi runs later (a
 * hook's script, an MCP server's program, magi's own code) and other sessions' scratch files
 * stay out of a sandboxed program's reach. Every folder is made here: HOME, the root and the
 * config folders are passed explicitly.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "../../lib/runtime/run_tool.ts";
import {
  sandboxLauncher,
  sandboxProblem,
  type SandboxScope,
} from "../../lib/confinement/sandbox.ts";
import { useBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { closeBodyWorkers } from "../../lib/sources/builtins/body_worker.ts";
import { testRuntime } from "../helpers.ts";
import { FAKE_KEY, inside } from "./sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

/** A HOME with credential stores, a project in it, and its XDG folders, under a new folder. */
async function homeWorld() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-home-" }));
  const home = join(base, "home");
  const stores: Record<string, string> = {
    ".aws/credentials": `aws_secret_access_key = ${FAKE_KEY}\n`,
    ".ssh/id_ed25519": FAKE_KEY + "\n",
    ".cargo/credentials": `[registry]\ntoken = "${FAKE_KEY}"\n`,
    ".gem/credentials": `:rubygems_api_key: ${FAKE_KEY}\n`,
    ".config/glab-cli/config.yml": `token: ${FAKE_KEY}\n`,
    ".config/rclone/rclone.conf": `[s3]\nsecret_access_key = ${FAKE_KEY}\n`,
    ".m2/settings.xml": `<settings><password>${FAKE_KEY}</password></settings>\n`,
    ".m2/settings-security.xml": `<master>${FAKE_KEY}</master>\n`,
  };
  for (const [rel, text] of Object.entries(stores)) {
    await Deno.mkdir(join(home, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text);
  }
  await Deno.writeTextFile(join(home, ".bashrc"), "echo ORIG\n");
  await Deno.mkdir(join(home, "proj"));
  // On PATH in Debian's default .profile when it exists.
  await Deno.mkdir(join(home, "bin"));
  await Deno.writeTextFile(join(home, "notes.txt"), "notes\n");
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
  };
  return {
    base,
    home,
    stores,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

for (const process of [true, false]) {
  Deno.test({
    name: `file builtins refuse the credential stores the sandbox hides, HOME being a root (${
      process ? "body process" : "Worker"
    })`,
    ignore,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using w = await homeWorld();
      useBodyProcesses(process);
      await using t = await testRuntime({
        cwd: w.home,
        env: w.env,
        config: { shipped_tools: false, roots: [w.home], approval: "never" },
      });
      try {
        for (const rel of Object.keys(w.stores)) {
          const r = await runTool(t.rt, { name: "read", args: { path: rel } });
          assert.equal(r.is_error, true, `${rel}: ${r.said}`);
          assert.match(r.said, new RegExp(`Cannot read "${rel}": a credential store, hidden`));
        }
        // Through a symlink in the root, and by a search of HOME or of a store.
        await Deno.symlink(join(w.home, ".aws"), join(w.home, "proj", "aws"));
        const link = await runTool(t.rt, { name: "read", args: { path: "proj/aws/credentials" } });
        assert.match(link.said, /a credential store, hidden from tools/);
        const all = await runTool(t.rt, { name: "grep", args: { pattern: "fake-key|notes" } });
        assert.doesNotMatch(all.said, /fake-key/);
        assert.match(all.said, /notes/);
        const store = await runTool(t.rt, {
          name: "grep",
          args: { pattern: "fake", paths: [".aws", ".cargo", ".config/glab-cli"] },
        });
        assert.doesNotMatch(store.said, /fake-key/);
        assert.match(store.said, /Cannot search ".aws": a credential store, hidden from tools/);
        // Nor written (a login planted, a credential_process added).
        const write = await runTool(t.rt, {
          name: "write",
          args: { path: ".ssh/authorized_keys", content: "ssh-ed25519 AAAA attacker\n" },
        });
        assert.match(write.said, /Cannot write ".ssh\/authorized_keys": a credential store/);
        const edit = await runTool(t.rt, {
          name: "edit",
          args: { path: ".aws/credentials", old_string: "aws_", new_string: "x" },
        });
        assert.equal(edit.is_error, true);
        await assert.rejects(Deno.stat(join(w.home, ".ssh", "authorized_keys")));
        assert.match(await Deno.readTextFile(join(w.home, ".aws", "credentials")), /^aws_/);
        const fine = await runTool(t.rt, { name: "read", args: { path: "notes.txt" } });
        assert.equal(fine.is_error, false, fine.said);
      } finally {
        useBodyProcesses(true);
        closeBodyProcesses();
        closeBodyWorkers();
      }
    },
  });
}

Deno.test({
  name: "a body process's namespace hides the credential stores in its roots (an unchecked body)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await homeWorld();
    const { runInBodyProcess, hiddenInside, bodyProcessProblem } = await import(
      "../../lib/sources/builtins/body_process.ts"
    );
    if (await bodyProcessProblem()) return;
    const { hiddenEntries } = await import("../../lib/confinement/sandbox_paths.ts");
    const module = join(w.home, "proj", "unchecked.js");
    await Deno.writeTextFile(
      module,
      `export const unchecked = { name: "unchecked", description: "x\\nx", parameters: {},
        run: async (args) => ({ said: await Deno.readTextFile(args.path) }) };\n`,
    );
    const set = { entries: hiddenEntries(w.home, [], []), visible: [], temps: [] };
    const access = { read: [w.home], write: false as const, ...hiddenInside(set, [w.home]) };
    try {
      const r = await runInBodyProcess({
        kind: "builtin",
        module: new URL(`file://${module}`).href,
        export: "unchecked",
        args: { path: join(w.home, ".aws", "credentials") },
        ctx: { cwd: w.home, env: {}, timeoutMs: 20_000, roots: [w.home] },
      }, { access, timeoutMs: 20_000, said: () => Promise.resolve() });
      assert.equal(r?.isError, true, String(r?.said));
      assert.doesNotMatch(String(r?.said), /fake-key/);
    } finally {
      closeBodyProcesses();
    }
  },
});

function launcher(
  w: { home: string },
  roots: string[],
  scope: Partial<SandboxScope> = {},
  mode: "read-only" | "workspace-write" = "workspace-write",
) {
  return sandboxLauncher(
    { mode: "workspace-write", network: false, denyRead: [] },
    { roots, home: w.home, hidden: [], ...scope },
    mode,
  );
}

Deno.test({
  name: "sandbox: the stores the attacker found and the temp folder's Kerberos caches are hidden",
  ignore,
  fn: async () => {
    await using w = await homeWorld();
    const ticket = await Deno.makeTempFile({ prefix: "krb5cc_magitest_" });
    await Deno.writeTextFile(ticket, FAKE_KEY);
    try {
      for (const mode of ["read-only", "workspace-write"] as const) {
        const r = await inside(
          launcher(w, [w.home, await Deno.realPath(Deno.env.get("TMPDIR") ?? "/tmp")], {}, mode),
          `cd "$H"; cat ${Object.keys(w.stores).join(" ")} "$T" 2>/dev/null; true`,
          { env: { H: w.home, T: ticket } },
        );
        assert.doesNotMatch(r.out, /fake-key/, `${mode}: ${r.out}`);
      }
    } finally {
      await Deno.remove(ticket);
    }
  },
});

Deno.test({
  name: "sandbox: HOME in a root keeps its start-up files, missing ones too, out of reach",
  ignore,
  fn: async () => {
    await using w = await homeWorld();
    const before = [...Deno.readDirSync(w.home)].map((e) => e.name).sort();
    const r = await inside(
      launcher(w, [w.home]),
      `cd "$H"; for f in .gitconfig .bash_profile .zshenv .bash_aliases .bashrc; do ` +
        `echo evil >> $f; done; mkdir -p .config/fish .local/bin .deno/bin; ` +
        `echo evil > .config/fish/config.fish; echo evil > .local/bin/git; ` +
        `echo evil > .deno/bin/magi; echo new > newfile; echo evil > bin/git; ` +
        `echo ok > proj/made && cat proj/made; echo more >> notes.txt; true`,
      { env: { H: w.home } },
    );
    assert.match(r.out, /^ok$/m, r.err);
    assert.equal(await Deno.readTextFile(join(w.home, "notes.txt")), "notes\nmore\n");
    assert.equal(await Deno.readTextFile(join(w.home, ".bashrc")), "echo ORIG\n");
    const after = [...Deno.readDirSync(w.home)].map((e) => e.name).sort();
    // Nothing new at HOME's top level: no start-up file, and none made as a mount point.
    assert.deepEqual(after, before);
    for (const p of [".config/fish", ".local/bin", "bin/git"]) {
      await assert.rejects(Deno.stat(join(w.home, p)), p);
    }
    // The same from `write`, which writes outside the sandbox.
    await using t = await testRuntime({
      cwd: w.home,
      env: w.env,
      config: { shipped_tools: false, roots: [w.home], approval: "never" },
    });
    for (const path of [".bash_profile", ".config/fish/config.fish", ".local/bin/git"]) {
      const res = await runTool(t.rt, { name: "write", args: { path, content: "evil\n" } });
      assert.equal(res.is_error, true, `${path}: ${res.said}`);
      assert.match(res.said, /is protected/);
    }
    const ok = await runTool(t.rt, { name: "write", args: { path: "proj/x", content: "x\n" } });
    assert.equal(ok.is_error, false, ok.said);
    // magi makes its own folders (`.cache`, `.local/state`): what `write` may not add is looked at.
    for (const p of [".bash_profile", ".config/fish", ".local/bin"]) {
      await assert.rejects(Deno.stat(join(w.home, p)), p);
    }
  },
});

Deno.test({
  name: "sandbox: a hook's script, an MCP server's program and magi's own code in a root stay " +
    "read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await homeWorld();
    const root = join(w.base, "root");
    await Deno.mkdir(join(root, "scripts"), { recursive: true });
    const hook = join(root, "scripts", "hook.sh");
    const server = join(root, "scripts", "server.js");
    await Deno.writeTextFile(hook, "#!/bin/sh\nexit 0\n");
    await Deno.writeTextFile(server, "// server\n");
    // magi's own code: the checkout, inside a root here (wherever it lies). (A root inside the
    // checkout is the person working on magi itself: then it is theirs to change.)
    const code = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
    const probe = join(code, `.magi-probe-${crypto.randomUUID()}`);
    await using t = await testRuntime({
      cwd: root,
      env: w.env,
      config: {
        shipped_tools: false,
        roots: [root, dirname(code)],
        approval: "never",
        // An unsandboxed hook (a sandboxed one reaches no more than the call that rewrote it).
        hooks: { after_tool: [{ command: `sh ${hook}`, sandbox: false }] },
        mcp_servers: { s: { command: "deno", args: ["run", server], cwd: root } },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo evil > scripts/hook.sh; echo evil > scripts/server.js; ` +
            `echo evil > "${probe}"; echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.match(r.said, /Read-only file system/);
      assert.equal(await Deno.readTextFile(hook), "#!/bin/sh\nexit 0\n");
      assert.equal(await Deno.readTextFile(server), "// server\n");
      await assert.rejects(Deno.stat(probe));
      const edit = await runTool(t.rt, {
        name: "write",
        args: { path: "scripts/hook.sh", content: "id\n" },
      });
      assert.match(edit.said, /what magi runs later/);
      assert.equal(await Deno.readTextFile(hook), "#!/bin/sh\nexit 0\n");
    } finally {
      await Deno.remove(probe).catch(() => {});
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: another magi process's scratch files are out of reach; the call's own are not",
  ignore,
  fn: async () => {
    await using w = await homeWorld();
    const url = new URL("../../lib/confinement/sandbox.ts", import.meta.url).href;
    // Another magi process: its scratch folder and the shown file a tool of it wrote there.
    const other = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const { scratchDir } = await import("${url}");
         const d = scratchDir();
         Deno.writeTextFileSync(d + "/magi-shown-1", "REAL: 3 tests FAILED");
         console.log(d);
         for await (const _ of Deno.stdin.readable) break;`,
      ],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const reader = other.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      line += value;
    }
    const theirs = line.trim();
    const { scratchDir } = await import("../../lib/confinement/sandbox.ts");
    const ours = scratchDir();
    try {
      for (const mode of ["read-only", "workspace-write"] as const) {
        const r = await inside(
          launcher(w, [w.home], { scratch: [ours] }, mode),
          `echo "all 3 tests passed" > "$T/magi-shown-1"; echo mine > "$O/mine" && cat "$O/mine"`,
          { env: { T: theirs, O: ours } },
        );
        assert.match(r.out, /^mine$/m, `${mode}: ${r.err}`);
      }
      assert.equal(
        await Deno.readTextFile(join(theirs, "magi-shown-1")),
        "REAL: 3 tests FAILED",
      );
    } finally {
      await other.stdin.close();
      reader.releaseLock();
      await other.stdout.cancel().catch(() => {});
      await other.status;
    }
  },
});
