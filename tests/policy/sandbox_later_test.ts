/**
 * What magi runs later outside any sandbox, with real bubblewrap and real processes (issue
 * #13): the folders tools are read from at start (`tools_dir`, `lua_dirs`) and PATH's folders
 * that a root holds outside its own project tree stay read-only in the sandbox, and `write`
 * refuses them. Every folder (HOME, the roots, the XDG folders, PATH) is made here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { testRuntime } from "../helpers.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

/** A new folder holding HOME (with its XDG folders) and a root beside it. */
async function world() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-later-" }));
  const home = join(base, "home");
  const root = join(base, "root");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(root, { recursive: true });
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
  };
  return {
    base,
    home,
    root,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

/** A runtime that acts without asking, in workspace-write, over the root (unless `more` says). */
function acting(
  w: Awaited<ReturnType<typeof world>>,
  cwd: string,
  more: { env?: Record<string, string>; config?: Record<string, unknown> } = {},
) {
  return testRuntime({
    cwd,
    env: { ...w.env, ...more.env },
    config: {
      shipped_tools: false,
      roots: [w.root],
      approval: "never",
      sandbox: { mode: "workspace-write" },
      ...more.config,
    },
  });
}

Deno.test({
  name: "sandbox: a tools_dir and a lua_dirs folder in a root stay read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    await Deno.mkdir(join(w.root, "tools"));
    await Deno.mkdir(join(w.root, "lua"));
    // One configured but not made yet: made empty and read-only, so none can fill it.
    const later = join(w.root, "later-tools");
    await using t = await testRuntime({
      cwd: w.root,
      env: w.env,
      config: {
        shipped_tools: false,
        roots: [w.root],
        approval: "never",
        tools_dir: [join(w.root, "tools"), later],
        lua_dirs: [join(w.root, "lua")],
        sandbox: { mode: "workspace-write" },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `mkdir tools/evil; printf '#!/bin/sh\\nid\\n' > tools/evil/evil; ` +
            `echo 'x' > lua/evil.lua; mkdir -p later-tools; echo x > later-tools/evil; ` +
            `echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.match(r.said, /Read-only file system/);
      assert.equal(await exists(join(w.root, "tools", "evil")), false);
      assert.equal(await exists(join(w.root, "lua", "evil.lua")), false);
      assert.equal(await exists(join(later, "evil")), false);
      for (const path of ["tools/evil", "lua/evil.lua", "later-tools/evil"]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "id\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /what magi runs later/);
      }
      assert.equal(await exists(join(w.root, "tools", "evil")), false);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: PATH's folders in HOME (a root) stay read-only; a project's own stay writable",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const goBin = join(w.home, "go", "bin");
    const proj = join(w.home, "proj");
    const npmBin = join(proj, "node_modules", ".bin");
    const tempBin = join(w.base, "tempbin");
    for (const d of [goBin, npmBin, tempBin]) await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(join(goBin, "gopls"), "#!/bin/sh\n");
    await using t = await testRuntime({
      cwd: w.home,
      env: { ...w.env, PATH: `${goBin}:${npmBin}:${tempBin}:${w.env.PATH}` },
      config: {
        shipped_tools: false,
        roots: [w.home, proj, w.base],
        approval: "never",
        sandbox: { mode: "workspace-write" },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo evil > go/bin/casper; echo evil >> go/bin/gopls; ` +
            `echo evil > "${tempBin}/casper"; echo ok > proj/node_modules/.bin/x; ` +
            `cat proj/node_modules/.bin/x`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.equal(await exists(join(goBin, "casper")), false);
      assert.equal(await exists(join(tempBin, "casper")), false);
      assert.equal(await Deno.readTextFile(join(goBin, "gopls")), "#!/bin/sh\n");
      for (const path of ["go/bin/casper", "go/bin/gopls", join(tempBin, "casper")]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "id\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /what magi runs later/);
      }
      const ok = await runTool(t.rt, {
        name: "write",
        args: { path: "proj/node_modules/.bin/y", content: "y\n" },
      });
      assert.equal(ok.is_error, false, ok.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

Deno.test({
  name: "sandbox: what a repository's config includes and its core.hooksPath stay read-only " +
    "(run, write); a commit still works",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const repo = join(w.root, "repo");
    await Deno.mkdir(join(repo, ".githooks"), { recursive: true });
    await git(repo, "init", "-q");
    await Deno.writeTextFile(join(repo, ".gitconfig"), "[alias]\n\tst = status\n");
    await Deno.writeTextFile(join(repo, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n");
    await git(repo, "config", "--local", "include.path", "../.gitconfig");
    await git(repo, "config", "--local", "core.hooksPath", ".githooks");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "0");
    await using t = await acting(w, repo, { env: GIT_ENV });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo '[core] fsmonitor = evil' >> .gitconfig; ` +
            `echo evil >> .githooks/pre-commit; echo evil > .githooks/post-checkout; ` +
            `echo x > f; git add f && git -c user.name=t -c user.email=t@t commit -qm 1 && ` +
            `git log --oneline | wc -l`,
        },
      });
      assert.match(r.said, /^2$/m, r.said);
      assert.equal(await Deno.readTextFile(join(repo, ".gitconfig")), "[alias]\n\tst = status\n");
      assert.equal(
        await Deno.readTextFile(join(repo, ".githooks", "pre-commit")),
        "#!/bin/sh\nexit 0\n",
      );
      assert.equal(await exists(join(repo, ".githooks", "post-checkout")), false);
      for (const path of [".gitconfig", ".githooks/post-checkout"]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /includes or runs/);
      }
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name:
    "sandbox: HOME's start-up files that are symlinks keep their targets read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const dot = join(w.home, "dotfiles");
    await Deno.mkdir(join(dot, "local-bin"), { recursive: true });
    await Deno.mkdir(join(w.home, ".local"), { recursive: true });
    await Deno.writeTextFile(join(dot, "bashrc"), "echo orig\n");
    await Deno.writeTextFile(join(dot, "gitconfig"), "[user]\n\tname = me\n");
    await Deno.writeTextFile(join(dot, "aliases"), "[alias]\n\tst = status\n");
    await Deno.writeTextFile(join(dot, "gitconfig"), `[include]\n\tpath = aliases\n`);
    await Deno.symlink("dotfiles/bashrc", join(w.home, ".bashrc"));
    await Deno.symlink(join(dot, "gitconfig"), join(w.home, ".gitconfig"));
    await Deno.symlink(join(dot, "local-bin"), join(w.home, ".local", "bin"));
    await using t = await acting(w, w.home, { config: { roots: [w.home] } });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo evil >> .bashrc; echo evil >> dotfiles/gitconfig; ` +
            `echo evil >> dotfiles/aliases; echo evil > .local/bin/git; ` +
            `echo ok > dotfiles/notes; cat dotfiles/notes`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.equal(await Deno.readTextFile(join(dot, "bashrc")), "echo orig\n");
      assert.equal(
        await Deno.readTextFile(join(dot, "gitconfig")),
        "[include]\n\tpath = aliases\n",
      );
      assert.equal(await Deno.readTextFile(join(dot, "aliases")), "[alias]\n\tst = status\n");
      assert.equal(await exists(join(dot, "local-bin", "git")), false);
      for (
        const path of [
          "dotfiles/bashrc",
          "dotfiles/gitconfig",
          "dotfiles/aliases",
          "dotfiles/local-bin/git",
        ]
      ) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /start-up files lead to/);
      }
      const edit = await runTool(t.rt, {
        name: "edit",
        args: { path: ".bashrc", old_string: "echo orig", new_string: "echo EDITED" },
      });
      assert.equal(edit.is_error, true, edit.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: magi's config folder as a symlink stays protected, and calls still run",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const target = join(w.home, "dotfiles", "magi");
    await Deno.mkdir(target, { recursive: true });
    await Deno.mkdir(join(w.home, ".config"), { recursive: true });
    await Deno.writeTextFile(join(target, "config.jsonc"), "{}\n");
    await Deno.symlink(target, join(w.home, ".config", "magi"));
    await using t = await testRuntime({
      cwd: w.root,
      env: w.env,
      config: {
        shipped_tools: false,
        roots: [w.root, w.base],
        approval: "never",
        sandbox: { mode: "workspace-write" },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo hi; echo evil > "${target}/AGENTS.md"; mkdir "${target}/tools"; ` +
            `cat "${target}/config.jsonc" | wc -c`,
        },
      });
      assert.match(r.said, /^hi$/m, r.said);
      assert.match(r.said, /^0$/m, r.said);
      assert.equal(await exists(join(target, "AGENTS.md")), false);
      assert.equal(await exists(join(target, "tools")), false);
      for (const path of [join(w.home, ".config/magi/AGENTS.md"), join(target, "AGENTS.md")]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /magi's own folder/);
      }
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: XDG_CONFIG_HOME outside HOME in a root stays read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const xdg = join(w.base, "outer", "xdg");
    await Deno.mkdir(join(xdg, "git"), { recursive: true });
    await Deno.writeTextFile(join(xdg, "git", "config"), "[user]\n\tname = me\n");
    await using t = await testRuntime({
      cwd: w.root,
      env: { ...w.env, XDG_CONFIG_HOME: xdg },
      config: {
        shipped_tools: false,
        roots: [w.root, join(w.base, "outer")],
        approval: "never",
        sandbox: { mode: "workspace-write" },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `X="${xdg}"; echo evil >> "$X/git/config"; ` +
            `mkdir -p "$X/fish" "$X/systemd/user" "$X/autostart"; echo evil > "$X/fish/c.fish"; ` +
            `echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.equal(await Deno.readTextFile(join(xdg, "git", "config")), "[user]\n\tname = me\n");
      for (const p of ["fish", "systemd", "autostart"]) {
        assert.equal(await exists(join(xdg, p)), false, p);
      }
      for (const path of [join(xdg, "git/config"), join(xdg, "fish/config.fish")]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /is protected/);
      }
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: a repository's missing .git/commondir and config.worktree made by a call " +
    "are gone when it ends",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const repo = join(w.root, "repo");
    await Deno.mkdir(repo);
    await git(repo, "init", "-q");
    await git(repo, "commit", "-q", "--allow-empty", "-m", "0");
    await using t = await acting(w, repo, { env: GIT_ENV });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `cp -r .git ../evilgit; echo "${w.root}/evilgit" > .git/commondir; ` +
            `echo x > .git/config.worktree; cat .git/commondir >/dev/null && echo planted`,
        },
      });
      assert.match(r.said, /^planted$/m, r.said);
      assert.equal(await exists(join(repo, ".git", "commondir")), false);
      assert.equal(await exists(join(repo, ".git", "config.worktree")), false);
      // The repository is as it was: git outside the sandbox still reads its own config.
      await git(repo, "status");
      const res = await runTool(t.rt, {
        name: "write",
        args: { path: ".git/commondir", content: "/elsewhere\n" },
      });
      assert.equal(res.is_error, true, res.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: where a tools_dir's links lead in a root stays read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    // A tool under development kept in the project and linked in, a program and a folder.
    for (const d of ["tools/linked", "scripts", "pkg/dtool"]) {
      await Deno.mkdir(join(w.root, d), { recursive: true });
    }
    const help = "#!/bin/sh\necho 'usage: x'\n";
    await Deno.writeTextFile(join(w.root, "scripts", "linked.sh"), help, { mode: 0o755 });
    await Deno.writeTextFile(join(w.root, "pkg", "dtool", "dtool"), help, { mode: 0o755 });
    await Deno.symlink("../../scripts/linked.sh", join(w.root, "tools", "linked", "linked"));
    await Deno.symlink("../pkg/dtool", join(w.root, "tools", "dtool"));
    await using t = await acting(w, w.root, { config: { tools_dir: [join(w.root, "tools")] } });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `echo id >> scripts/linked.sh; echo id >> pkg/dtool/dtool; ` +
            `echo x > pkg/dtool/planted; echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.match(r.said, /Read-only file system/);
      assert.equal(await Deno.readTextFile(join(w.root, "scripts", "linked.sh")), help);
      assert.equal(await Deno.readTextFile(join(w.root, "pkg", "dtool", "dtool")), help);
      assert.equal(await exists(join(w.root, "pkg", "dtool", "planted")), false);
      for (const path of ["scripts/linked.sh", "pkg/dtool/dtool"]) {
        const res = await runTool(t.rt, { name: "write", args: { path, content: "id\n" } });
        assert.equal(res.is_error, true, `${path}: ${res.said}`);
        assert.match(res.said, /what magi runs later/);
      }
      assert.equal(await Deno.readTextFile(join(w.root, "scripts", "linked.sh")), help);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: with the XDG config folder a root, its missing start-up folders cannot be made",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const xdg = join(w.home, ".config");
    await Deno.mkdir(join(xdg, "git"), { recursive: true });
    await using t = await acting(w, xdg, { config: { roots: [xdg] } });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `for d in autostart environment.d direnv; do mkdir -p $d; ` +
            `echo evil > $d/x; done; echo evil > direnv/direnvrc; echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      for (const p of ["autostart/x", "environment.d/x", "direnv/x", "direnv/direnvrc"]) {
        assert.equal(await exists(join(xdg, p)), false, `${p}: ${r.said}`);
      }
      assert.equal(await exists(join(xdg, "made")), true);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: start-up files variables move out of HOME stay read-only (run, write)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const dot = join(w.root, "dotfiles");
    await Deno.mkdir(join(dot, "zsh"), { recursive: true });
    const files = ["gitconfig", "bashenv", "pystartup.py", "inputrc", "zsh/.zshrc"];
    for (const f of files) await Deno.writeTextFile(join(dot, f), "# mine\n");
    const env = {
      GIT_CONFIG_GLOBAL: join(dot, "gitconfig"),
      BASH_ENV: join(dot, "bashenv"),
      PYTHONSTARTUP: join(dot, "pystartup.py"),
      INPUTRC: join(dot, "inputrc"),
      ZDOTDIR: join(dot, "zsh"),
    };
    await using t = await acting(w, w.root, { env });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `for f in ${files.join(" ")}; do echo evil >> dotfiles/$f; done; ` +
            `echo evil > dotfiles/zsh/.zshenv; echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      for (const f of files) {
        assert.equal(await Deno.readTextFile(join(dot, f)), "# mine\n", `${f}: ${r.said}`);
      }
      assert.equal(await exists(join(dot, "zsh", ".zshenv")), false);
      const res = await runTool(t.rt, {
        name: "write",
        args: { path: "dotfiles/gitconfig", content: "[core]\n\tfsmonitor = id\n" },
      });
      assert.equal(res.is_error, true, res.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: a trusted project's .magi and git config three folders below a root stay " +
    "read-only",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const app = join(w.root, "a", "b", "c", "app");
    await Deno.mkdir(join(app, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(app, ".git", "config"), "[core]\n");
    await using t = await acting(w, w.root, { config: { trusted_projects: [app] } });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `cd a/b/c/app; mkdir -p .magi; echo '{}' > .magi/config.jsonc; ` +
            `echo evil >> .git/config; echo id > .git/hooks/post-checkout; ` +
            `echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.equal(await exists(join(app, ".magi", "config.jsonc")), false, r.said);
      assert.equal(await Deno.readTextFile(join(app, ".git", "config")), "[core]\n");
      assert.equal(await exists(join(app, ".git", "hooks", "post-checkout")), false);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: a configured sessions_dir and spill_dir in a root are hidden in magi call too",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const sessions = join(w.root, "sess");
    const spills = join(w.root, "spills");
    await Deno.mkdir(join(sessions, "20260101-000000-aaaaaa"), { recursive: true });
    await Deno.writeTextFile(join(sessions, "20260101-000000-aaaaaa", "transcript.jsonl"), "{}\n");
    await Deno.mkdir(spills);
    await Deno.writeTextFile(join(spills, "old.txt"), "spilled\n");
    await using t = await acting(w, w.root, {
      config: { sessions_dir: sessions, spill_dir: spills },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `ls sess spills; echo forged >> sess/20260101-000000-aaaaaa/transcript.jsonl; ` +
            `echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      assert.doesNotMatch(r.said, /^20260101|old\.txt/m, r.said);
      assert.equal(
        await Deno.readTextFile(join(sessions, "20260101-000000-aaaaaa", "transcript.jsonl")),
        "{}\n",
      );
      const path = "sess/20260101-000000-aaaaaa/transcript.jsonl";
      const res = await runTool(t.rt, { name: "read", args: { path } });
      assert.equal(res.is_error, true, res.said);
      const wr = await runTool(t.rt, { name: "write", args: { path, content: "x\n" } });
      assert.equal(wr.is_error, true, wr.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name: "sandbox: a hidden file's folder in a root cannot be moved aside to read it there",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    await Deno.mkdir(join(w.root, "k"));
    await Deno.writeTextFile(join(w.root, "k", "sa.json"), "SA-SECRET-KEY\n");
    await Deno.mkdir(join(w.root, "proj", "secrets"), { recursive: true });
    await Deno.writeTextFile(join(w.root, "proj", "secrets", "token"), "DENY-READ-TOKEN\n");
    await using t = await acting(w, w.root, {
      env: { GOOGLE_APPLICATION_CREDENTIALS: join(w.root, "k", "sa.json") },
      config: {
        sandbox: { mode: "workspace-write", deny_read: [join(w.root, "proj", "secrets")] },
      },
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: `mv k k2 2>&1; mv proj proj2 2>&1; cat k2/sa.json proj2/secrets/token 2>&1; ` +
            `echo ok > made; cat made`,
        },
      });
      assert.match(r.said, /^ok$/m, r.said);
      const again = await runTool(t.rt, {
        name: "run",
        args: { command: `cat k2/sa.json proj2/secrets/token 2>&1; echo done` },
      });
      for (const out of [r.said, again.said]) {
        assert.doesNotMatch(out, /SA-SECRET-KEY|DENY-READ-TOKEN/, out);
      }
      assert.equal(await exists(join(w.root, "k", "sa.json")), true);
      assert.equal(await exists(join(w.root, "proj", "secrets", "token")), true);
    } finally {
      closeBodyProcesses();
    }
  },
});
