/**
 * What the person's own git, shell or magi runs later is written by no call: the file
 * builtins refuse it (they write outside the sandbox) and the workspace-write sandbox mounts it
 * read-only — magi's own config, state and cache folders too, even when missing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { magiOwnDirs } from "../../lib/policy/protected.ts";
import { sandboxLauncher, sandboxProblem, sandboxSettings } from "../../lib/confinement/sandbox.ts";
import { tempDir, testRuntime } from "../helpers.ts";
import { inside, world } from "./sandbox_world.ts";

Deno.test("write and edit refuse .git/config, .git/hooks, .magi and magi's own folders", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await Deno.mkdir(join(root, ".git", "hooks"), { recursive: true });
  await Deno.writeTextFile(join(root, ".git", "config"), "[core]\n");
  // Git dirs by another name: a bare repository, a worktree's and a submodule's.
  for (const gitDir of ["remote.git", ".git/worktrees/wt1", ".git/modules/sm"]) {
    await Deno.mkdir(join(root, gitDir, "objects"), { recursive: true });
    await Deno.writeTextFile(join(root, gitDir, "HEAD"), "ref: refs/heads/main\n");
  }
  const home = join(root, "home");
  await using t = await testRuntime({
    cwd: root,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
    config: { shipped_tools: false, roots: [root] },
  });
  const targets = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".magi/tools/evil.lua",
    "sub/.magi/config.jsonc",
    "home/.config/magi/config.jsonc",
    "home/.bashrc",
    "remote.git/config",
    "remote.git/hooks/pre-receive",
    ".git/worktrees/wt1/commondir",
    ".git/modules/sm/config",
    ".git/config.lock",
  ];
  for (const path of targets) {
    const r = await runTool(t.rt, {
      name: "write",
      args: { path, content: "[core]\n\tfsmonitor = evil\n" },
      caller: "person",
    });
    assert.equal(r.is_error, true, `${path}: ${r.said}`);
    // magi's own config file is hidden from tools as well as protected.
    assert.match(r.said, /is protected|hidden from tools/, path);
  }
  assert.equal(await Deno.readTextFile(join(root, ".git", "config")), "[core]\n");
  const edit = await runTool(t.rt, {
    name: "edit",
    args: { path: ".git/config", old_string: "[core]", new_string: "[core]\n\thooksPath = x" },
    caller: "person",
  });
  assert.equal(edit.is_error, true, edit.said);
  const ok = await runTool(t.rt, {
    name: "write",
    args: { path: "src/main.ts", content: "x\n" },
    caller: "person",
  });
  assert.equal(ok.is_error, false, ok.said);
});

const why = await sandboxProblem();

Deno.test({
  name: "sandbox: workspace-write cannot plant magi's config or tool links when HOME is a root's",
  ignore: why !== undefined,
  fn: async () => {
    await using w = await world({ homeInRoot: true });
    const env = { HOME: w.home };
    const [config, , cache] = magiOwnDirs(env);
    await Deno.mkdir(join(cache, "links"), { recursive: true });
    const wrap = sandboxLauncher(sandboxSettings({}), {
      roots: [w.root],
      home: w.home,
      hidden: [],
      ownDirs: magiOwnDirs(env),
    }, "workspace-write");
    const r = await inside(
      wrap,
      `mkdir -p "${config}" 2>&1; echo '{}' > "${config}/config.jsonc" 2>&1; ` +
        `mv "${config}" "${config}.old" 2>&1; ln -s /bin/sh "${cache}/links/ls" 2>&1; ` +
        `echo x > "${w.root}/ok" && echo wrote-root`,
    );
    assert.match(r.out, /wrote-root/, r.out + r.err);
    await assert.rejects(Deno.stat(join(config, "config.jsonc")), "config planted");
    await assert.rejects(Deno.lstat(join(cache, "links", "ls")), "tool link planted");
  },
});
