/**
 * `gitConfigReach`: what a git config file makes git read or run from elsewhere, from real
 * files in a new folder (includes followed, quotes and comments read as git reads them).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { gitConfigReach } from "../../lib/confinement/sandbox_paths.ts";

Deno.test("gitConfigReach: include.path, includeIf, core.hooksPath, followed and resolved", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-reach-" }));
  try {
    const home = join(base, "home");
    const repo = join(base, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(join(repo, ".husky"));
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(repo, "shared.gitconfig"), "[include]\n\tpath = more\n");
    await Deno.writeTextFile(join(repo, "more"), "[alias]\n\tx = y\n");
    await Deno.writeTextFile(join(home, "work.gitconfig"), "[user]\n\tname = me\n");
    await Deno.writeTextFile(
      join(repo, ".git", "config"),
      `[core]\n\tbare = false\n[Include]\n\tPath = "../shared.gitconfig" ; a comment\n` +
        `[includeIf "gitdir:~/work/"]\n\tpath = ~/work.gitconfig\n` +
        `[core] hooksPath = .husky # hooks\n[alias]\n\tpath = not-an-include\n`,
    );
    const got = gitConfigReach(join(repo, ".git", "config"), home, [repo]).sort();
    assert.deepEqual(
      got,
      [
        join(home, "work.gitconfig"),
        join(repo, ".husky"),
        join(repo, "more"),
        join(repo, "shared.gitconfig"),
      ].sort(),
    );
    // A missing include is named as resolved, so `write` refuses to make it.
    await Deno.writeTextFile(join(repo, ".git", "config"), "[include]\n\tpath = ../gone\n");
    assert.deepEqual(gitConfigReach(join(repo, ".git", "config"), home, [repo]), [
      join(repo, "gone"),
    ]);
    assert.deepEqual(gitConfigReach(join(repo, "missing"), home), []);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
