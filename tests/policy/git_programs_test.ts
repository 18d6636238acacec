/**
 * The programs a git config names (`git_programs.ts`), one case per entry of PROGRAM_KEYS, read
 * from real files by real git; and in the real sandbox (bwrap): a program a repository's config
 * or HOME's names inside a root stays read-only, one that is missing cannot be made, and `write`
 * refuses both.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  gitEntriesOf,
  PROGRAM_KEYS,
  programKind,
  programPaths,
} from "../../lib/confinement/git_programs.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { testRuntime } from "../helpers.ts";

/** One key of each PROGRAM_KEYS entry, a value naming `./p`, and whether it counts. */
const CASES: [string, string, boolean][] = [
  ["core.fsmonitor", "./p", true],
  ["core.sshCommand", "./p -v", true],
  ["core.editor", "./p", true],
  ["core.pager", "LESS=R ./p", true],
  ["core.askPass", "./p", true],
  ["core.gitProxy", "./p", true],
  ["sequence.editor", "./p", true],
  ["gpg.program", "./p", true],
  ["gpg.ssh.program", "./p", true],
  ["gpg.ssh.defaultKeyCommand", "./p", true],
  ["credential.helper", "!./p get", true],
  ["credential.https://example.com.helper", "!f() { ./p; }; f", true],
  ["filter.lfs.clean", "./p %f", true],
  ["diff.pdf.textconv", "./p", true],
  ["diff.external", "./p", true],
  ["merge.ours.driver", "./p %O %A %B", true],
  ["difftool.x.cmd", './p "$LOCAL"', true],
  ["mergetool.x.path", "./p", true],
  ["alias.st", "!sh ./p", true],
  ["uploadpack.packObjectsHook", "./p", true],
  ["pager.log", "./p", true],
  ["interactive.diffFilter", "./p", true],
  ["submodule.lib.update", "!./p", true],
  ["remote.origin.uploadpack", "./p", true],
  ["sendemail.sendmailCmd", "./p", true],
  ["sendemail.work.smtpServer", "./p", true],
  ["trailer.sign.command", "./p", true],
  ["tar.tgz.command", "./p", true],
  ["web.browser", "./p", true],
  ["browser.x.path", "./p", true],
  ["man.x.cmd", "./p", true],
  ["man.x.path", "./p", true],
  ["hook.lint.command", "./p", true],
  // What git does not run as a program: left alone.
  ["alias.st", "status ./p", false],
  ["core.fsmonitor", "true", false],
  ["pager.log", "false", false],
  ["credential.helper", "store --file ./p", false],
  ["user.name", "./p", false],
];

Deno.test("git_programs: every PROGRAM_KEYS entry has a case, read by git from a real file", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-gitprog-" }));
  try {
    for (const entry of PROGRAM_KEYS) {
      assert.ok(CASES.some(([k, , runs]) => runs && entry.key.test(k)), `no case: ${entry.key}`);
    }
    for (const [key, value, runs] of CASES) {
      const file = join(base, "config");
      const dot = key.indexOf(".");
      const last = key.lastIndexOf(".");
      const section = dot === last
        ? `[${key.slice(0, dot)}]`
        : `[${key.slice(0, dot)} "${key.slice(dot + 1, last)}"]`;
      const quoted = value.replaceAll("\\", "\\\\").replaceAll('"', '\\"');
      await Deno.writeTextFile(file, `${section}\n\t${key.slice(last + 1)} = "${quoted}"\n`);
      const entries = gitEntriesOf(file);
      assert.equal(entries.length, 1, key);
      assert.equal(entries[0].value, value, key);
      assert.equal(programKind(entries[0].key) !== undefined || !runs, true, key);
      assert.deepEqual(programPaths(entries[0], "/h", ["/top"]), runs ? ["/top/p"] : [], key);
      await Deno.remove(file);
    }
    // Reading a config runs nothing it names.
    const mark = join(base, "ran");
    const script = join(base, "mark.sh");
    await Deno.writeTextFile(script, `#!/bin/sh\ntouch ${mark}\n`);
    await Deno.chmod(script, 0o755);
    const hostile = join(base, "hostile");
    await Deno.writeTextFile(
      hostile,
      `[core]\n\tfsmonitor = ${script}\n\tpager = ${script}\n[include]\n\tpath = ${script}\n`,
    );
    assert.equal(gitEntriesOf(hostile).length, 3);
    assert.equal(await Deno.lstat(mark).then(() => true, () => false), false);
    // A continuation line, as git joins it, and `~/` against HOME.
    const file = join(base, "cont");
    await Deno.writeTextFile(file, "[core]\n\tfsmonitor = ./wat\\\nch.sh\n\tpager = ~/bin/p\n");
    assert.deepEqual(gitEntriesOf(file).flatMap((e) => programPaths(e, "/h", ["/top"])), [
      "/top/watch.sh",
      "/h/bin/p",
    ]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

Deno.test({
  name: "sandbox: programs a repository's and HOME's git config name in a root stay read-only; " +
    "missing ones cannot be made (run, write)",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-gitprog-" }));
    try {
      const home = join(base, "home");
      const root = join(base, "root");
      const repo = join(root, "repo");
      await Deno.mkdir(join(repo, "tools"), { recursive: true });
      await Deno.mkdir(home);
      await git(repo, "init", "-q");
      // One key of each kind, existing programs, and missing ones (one in a missing folder).
      const set: [string, string][] = [
        ["core.fsmonitor", "tools/fsmon.sh"],
        ["alias.lint", "!sh tools/lint.sh"],
        ["credential.helper", `!${repo}/tools/cred.sh`],
        ["gpg.program", "tools/gpg"],
        ["filter.x.clean", "./gone.sh %f"],
        ["diff.x.textconv", "newdir/conv.sh"],
        // A folder on a line is no program: the tree stays writable.
        ["alias.b", "!cd ./tools && make -C ./"],
      ];
      for (const name of ["fsmon.sh", "lint.sh", "cred.sh", "gpg"]) {
        await Deno.writeTextFile(join(repo, "tools", name), "#!/bin/sh\nexit 0\n");
      }
      for (const [k, v] of set) await git(repo, "config", k, v);
      await Deno.writeTextFile(join(home, ".gitconfig"), `[core]\n\tpager = ${root}/pager.sh\n`);
      await Deno.writeTextFile(join(root, "pager.sh"), "#!/bin/sh\ncat\n");
      const env = {
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_STATE_HOME: join(home, ".local", "state"),
        XDG_CACHE_HOME: join(home, ".cache"),
        PATH: "/usr/local/bin:/usr/bin:/bin",
      };
      await using t = await testRuntime({
        cwd: repo,
        env,
        config: {
          shipped_tools: false,
          roots: [root],
          approval: "never",
          sandbox: { mode: "workspace-write" },
        },
      });
      try {
        const r = await runTool(t.rt, {
          name: "run",
          args: {
            command: `for f in tools/fsmon.sh tools/lint.sh tools/cred.sh tools/gpg ../pager.sh; ` +
              `do echo evil >> $f; done; echo evil > gone.sh; mkdir newdir; ` +
              `echo evil > newdir/conv.sh; echo ok > made; cat made`,
          },
        });
        assert.match(r.said, /^ok$/m, r.said);
        assert.match(r.said, /Read-only file system/);
        assert.equal(await Deno.readTextFile(join(repo, "made")), "ok\n");
        const tools = await runTool(t.rt, {
          name: "run",
          args: { command: "echo t > tools/new && cat tools/new" },
        });
        assert.match(tools.said, /^t$/m, tools.said);
        for (const name of ["fsmon.sh", "lint.sh", "cred.sh", "gpg"]) {
          assert.equal(
            await Deno.readTextFile(join(repo, "tools", name)),
            "#!/bin/sh\nexit 0\n",
            name,
          );
        }
        assert.equal(await Deno.readTextFile(join(root, "pager.sh")), "#!/bin/sh\ncat\n");
        // The empty file bwrap made in the missing one's place is gone with the call.
        assert.equal(await exists(join(repo, "gone.sh")), false);
        assert.equal(await exists(join(repo, "newdir", "conv.sh")), false);
        for (const path of ["tools/fsmon.sh", "gone.sh", "../pager.sh"]) {
          const res = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
          assert.equal(res.is_error, true, `${path}: ${res.said}`);
        }
        // The repository still works from the sandbox.
        const st = await runTool(t.rt, {
          name: "run",
          args: { command: "echo y > f; git add f && echo added" },
        });
        assert.match(st.said, /^added$/m, st.said);
      } finally {
        closeBodyProcesses();
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
