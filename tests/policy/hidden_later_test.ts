/**
 * The file builtins' hidden list is checked against the folders it was resolved in, on every
 * call (`hiddenFor`): a folder that was missing and is made later — directly, or as a symlink
 * that leads nowhere at first and somewhere later — brings its store into the list for the
 * next call. HOME and the root are made here and passed explicitly; real bubblewrap (where it
 * works) and real files.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { closeBodyWorkers } from "../../lib/sources/builtins/body_worker.ts";
import { testRuntime } from "../helpers.ts";

const TOKEN = "ghp_LaterStore0123456789abcdefABCDEF00000";

Deno.test({
  name: "a store whose folder was missing, made later or reached by a late symlink, is refused",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-hidden-later-" }));
    const home = join(base, "home");
    await Deno.mkdir(join(home, ".config"), { recursive: true });
    await Deno.writeTextFile(join(home, "notes.txt"), "notes\n");
    const env = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".state"),
      XDG_CACHE_HOME: join(home, ".cache"),
    };
    await using t = await testRuntime({
      cwd: home,
      env,
      config: { shipped_tools: false, roots: [home], approval: "never" },
    });
    const read = (path: string) => runTool(t.rt, { name: "read", args: { path } });
    try {
      // The list is resolved while .local/share and .config/git are missing.
      assert.equal((await read("notes.txt")).is_error, false);
      await Deno.mkdir(join(home, ".local", "share", "fish"), { recursive: true });
      await Deno.writeTextFile(join(home, ".local", "share", "fish", "fish_history"), TOKEN);
      const history = await read(".local/share/fish/fish_history");
      assert.equal(history.is_error, true, history.said);
      assert.doesNotMatch(history.said, /ghp_/);
      // A symlink that leads nowhere, then somewhere.
      await Deno.symlink("../elsewhere/git", join(home, ".config", "git"));
      assert.equal((await read("notes.txt")).is_error, false);
      await Deno.mkdir(join(home, "elsewhere", "git"), { recursive: true });
      await Deno.writeTextFile(join(home, "elsewhere", "git", "credentials"), TOKEN);
      for (const path of [".config/git/credentials", "elsewhere/git/credentials"]) {
        const r = await read(path);
        assert.equal(r.is_error, true, `${path}: ${r.said}`);
        assert.doesNotMatch(r.said, /ghp_/, path);
      }
      assert.equal((await read("notes.txt")).is_error, false);
    } finally {
      closeBodyProcesses();
      closeBodyWorkers();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});
