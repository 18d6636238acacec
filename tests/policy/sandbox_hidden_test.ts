/**
 * What every sandbox hides besides the credential stores themselves, with real bubblewrap and
 * real processes: shell and client histories, the targets of symlinks inside a hidden folder
 * (stow's layout), the system's password files and, for magi run as root, other users' home
 * folders, and the kernel's key lists. The file builtins refuse the same list. HOME, the root
 * and the dotfiles folder are made here and passed explicitly.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxLauncher, sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { closeBodyWorkers } from "../../lib/sources/builtins/body_worker.ts";
import { testRuntime } from "../helpers.ts";
import { inside } from "./sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

const TOKEN = "ghp_HistoryLeak0123456789abcdefABCDEF0000";

/** HOME (a root) with histories and a stow-style `.aws`/`.ssh` whose files link to dotfiles. */
async function homeWorld() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-hidden-" }));
  const home = join(base, "home");
  const histories = {
    ".bash_history": `export GITHUB_TOKEN=${TOKEN}\n`,
    ".rediscli_history": `AUTH ${TOKEN}\n`,
    ".local/share/fish/fish_history": `- cmd: set -x OPENAI_API_KEY ${TOKEN}\n`,
    ".psql_history": `\\password ${TOKEN}\n`,
  };
  const linked = {
    "dotfiles/aws/credentials": `aws_secret_access_key = ${TOKEN}\n`,
    "dotfiles/ssh/keys/id_rsa": `${TOKEN}\n`,
  };
  for (const [rel, text] of Object.entries({ ...histories, ...linked })) {
    await Deno.mkdir(join(home, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text);
  }
  await Deno.mkdir(join(home, ".aws"));
  await Deno.symlink("../dotfiles/aws/credentials", join(home, ".aws", "credentials"));
  // Two levels down in the hidden folder, and a link to HOME itself (which stays visible).
  await Deno.mkdir(join(home, ".ssh", "keys"), { recursive: true });
  await Deno.symlink("../../dotfiles/ssh/keys/id_rsa", join(home, ".ssh", "keys", "id_rsa"));
  await Deno.symlink("../", join(home, ".ssh", "home"));
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
    paths: [...Object.keys(histories), ...Object.keys(linked)],
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test({
  name: "histories and the targets of links inside a hidden folder: refused by the builtins",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await homeWorld();
    await using t = await testRuntime({
      cwd: w.home,
      env: w.env,
      config: { shipped_tools: false, roots: [w.home], approval: "never" },
    });
    try {
      for (const rel of w.paths) {
        const r = await runTool(t.rt, { name: "read", args: { path: rel } });
        assert.equal(r.is_error, true, `${rel}: ${r.said}`);
        assert.match(r.said, /hidden from tools/, rel);
        assert.doesNotMatch(r.said, /ghp_/, rel);
      }
      const history = await runTool(t.rt, { name: "read", args: { path: ".bash_history" } });
      assert.match(history.said, /a shell or client history, hidden/);
      const found = await runTool(t.rt, {
        name: "grep",
        args: { pattern: "ghp_|notes", paths: ["."] },
      });
      assert.doesNotMatch(found.said, /ghp_/);
      assert.match(found.said, /notes/);
      // A link added later, to a file in HOME, hides that file from the next call.
      await Deno.writeTextFile(join(w.home, "dotfiles", "later"), TOKEN);
      await Deno.symlink("../dotfiles/later", join(w.home, ".aws", "config"));
      const later = await runTool(t.rt, { name: "read", args: { path: "dotfiles/later" } });
      assert.match(later.said, /a credential store, hidden from tools/);
      const fine = await runTool(t.rt, { name: "read", args: { path: "notes.txt" } });
      assert.equal(fine.is_error, false, fine.said);
    } finally {
      closeBodyProcesses();
      closeBodyWorkers();
    }
  },
});

Deno.test({
  name: "sandbox: histories, links' targets, password files and the kernel's key lists hidden",
  ignore,
  fn: async () => {
    await using w = await homeWorld();
    for (const mode of ["read-only", "workspace-write"] as const) {
      const wrap = sandboxLauncher(
        { mode: "workspace-write", network: false, denyRead: [] },
        { roots: [w.home], home: w.home, hidden: [] },
        mode,
      );
      const r = await inside(
        wrap,
        `cd "$H"; cat ${w.paths.join(" ")} /etc/shadow /etc/gshadow 2>/dev/null; ` +
          `echo "keys:$(cat /proc/keys /proc/key-users 2>/dev/null | wc -c)"; cat notes.txt`,
        { env: { H: w.home } },
      );
      assert.doesNotMatch(r.out, /ghp_/, `${mode}: ${r.out}`);
      assert.doesNotMatch(r.out, /^root:/m, `${mode}: ${r.out}`);
      assert.match(r.out, /keys:0\b/, `${mode}: ${r.out} ${r.err}`);
      assert.match(r.out, /notes/, `${mode}: ${r.out} ${r.err}`);
    }
  },
});

Deno.test({
  name: "sandbox: magi run as root hides other users' home folders, not one a root lies in",
  ignore: ignore || Deno.statSync("/proc/self").uid !== 0,
  fn: async () => {
    await using w = await homeWorld();
    const other = await Deno.makeTempDir({ dir: "/home", prefix: "magi-other-" });
    const kept = await Deno.makeTempDir({ dir: "/home", prefix: "magi-kept-" });
    try {
      await Deno.writeTextFile(join(other, "secret"), TOKEN);
      await Deno.mkdir(join(kept, "proj"));
      await Deno.writeTextFile(join(kept, "proj", "seen"), "SEEN");
      const wrap = sandboxLauncher(
        { mode: "workspace-write", network: false, denyRead: [] },
        { roots: [w.home, join(kept, "proj")], home: w.home, hidden: [] },
        "read-only",
      );
      const r = await inside(
        wrap,
        `cat "$O/secret" "$K/proj/seen" 2>/dev/null; echo; cat notes.txt`,
        { cwd: w.home, env: { O: other, K: kept } },
      );
      assert.doesNotMatch(r.out, /ghp_/, r.out);
      assert.match(r.out, /SEEN/, `${r.out} ${r.err}`);
      assert.match(r.out, /notes/, `${r.out} ${r.err}`);
    } finally {
      await Deno.remove(other, { recursive: true });
      await Deno.remove(kept, { recursive: true });
    }
  },
});
