import assert from "node:assert/strict";
import { join } from "node:path";
import { buildPrompt, contextFiles } from "../../lib/agent/prompt.ts";
import { magi, tempDir, writeConfig } from "../helpers.ts";

const NOW = new Date("2026-03-04T05:06:07Z");

async function tree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(root, rel);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
}

Deno.test(
  "buildPrompt() carries the user's AGENTS.md, then the git root's down to cwd, nearest last",
  {
    sanitizeResources: true,
  },
  async () => {
    await using dir = await tempDir();
    const repo = join(dir.path, "repo");
    const config = join(dir.path, "config");
    await tree(dir.path, {
      "AGENTS.md": "ABOVE THE REPO\n",
      "config/magi/AGENTS.md": "USER WIDE\n",
      "repo/.git/HEAD": "ref: refs/heads/main\n",
      "repo/AGENTS.md": "ROOT RULES\n",
      "repo/a/CLAUDE.md": "CLAUDE IN A\n",
      "repo/a/b/AGENTS.md": "NEAREST B\n",
      "repo/a/b/CLAUDE.md": "CLAUDE IN B (shadowed)\n",
    });
    const cwd = join(repo, "a", "b");
    const env = { XDG_CONFIG_HOME: config, USER: "ada" };
    assert.deepEqual(contextFiles(cwd, env), [
      join(config, "magi", "AGENTS.md"),
      join(repo, "AGENTS.md"),
      join(repo, "a", "CLAUDE.md"),
      join(repo, "a", "b", "AGENTS.md"),
    ]);
    const prompt = buildPrompt({ cwd, env, now: NOW });
    const order = ["USER WIDE", "ROOT RULES", "CLAUDE IN A", "NEAREST B"].map((t) =>
      prompt.text.indexOf(t)
    );
    assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1])), String(order));
    assert.ok(!prompt.text.includes("ABOVE THE REPO"));
    assert.ok(!prompt.text.includes("shadowed"));
    // The same inputs give the same bytes: a provider's prompt cache keeps the prefix.
    assert.equal(
      buildPrompt({ cwd, env, now: new Date("2026-03-04T23:59:59Z") }).text,
      prompt.text,
    );
  },
);

Deno.test("buildPrompt() without a git root reads only the working folder; the budget is shared", async () => {
  await using dir = await tempDir();
  await tree(dir.path, {
    "AGENTS.md": "PARENT\n",
    "w/AGENTS.md": "x".repeat(40_000),
  });
  const prompt = buildPrompt({ cwd: join(dir.path, "w"), env: {}, now: NOW });
  assert.ok(!prompt.text.includes("PARENT"));
  assert.deepEqual(prompt.files.map((f) => [f.bytes, f.kept]), [[40_000, 32_768]]);
  assert.match(prompt.text, /AGENTS\.md cut at 32768 of 40000 bytes/);
});

Deno.test("buildPrompt() puts a configured opening and the skills catalogue in", async () => {
  await using dir = await tempDir();
  const prompt = buildPrompt({
    cwd: dir.path,
    env: {},
    now: NOW,
    base: "You are the release bot.",
    skills: [{ name: "pdf", description: "Fill PDF\n forms." }],
  });
  assert.equal(prompt.text.split("\n")[0], "You are the release bot.");
  assert.match(prompt.text, /\n- pdf: Fill PDF forms\.\n/);
});

Deno.test("magi context prints the prompt with its context files and its size in bytes", async () => {
  await using dir = await tempDir();
  await tree(dir.path, {
    ".git/HEAD": "x\n",
    "AGENTS.md": "Run `make test` before you answer.\n",
    "prompt.txt": "You are a careful reviewer.\n",
  });
  await Deno.mkdir(join(dir.path, "cfg"));
  await writeConfig(join(dir.path, "cfg"), { system_prompt_file: join(dir.path, "prompt.txt") });
  const out = await magi(["context", "--config", join(dir.path, "cfg", "config.jsonc")], {
    cwd: dir.path,
  });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^You are a careful reviewer\.\n/);
  assert.match(out.stdout, /Run `make test` before you answer\./);
  const system = out.stdout.slice(0, out.stdout.indexOf("\n---\n"));
  const size = new TextEncoder().encode(system).length;
  assert.match(out.stdout, new RegExp(`system prompt: ${size} bytes`));
  assert.match(out.stdout, new RegExp(`${join(dir.path, "AGENTS.md")} \\(35 bytes\\)`));
  assert.match(out.stdout, /tool declarations: \d+, \d+ bytes as JSON/);
});

Deno.test("contextFiles() passes over a checkout's AGENTS.md that links out of the checkout", async () => {
  await using dir = await tempDir();
  await tree(dir.path, { "secret.txt": "hunter2-key\n", "repo/.git/HEAD": "x\n" });
  const repo = join(dir.path, "repo");
  await Deno.symlink(join(dir.path, "secret.txt"), join(repo, "AGENTS.md"));
  await Deno.writeTextFile(join(repo, "CLAUDE.md"), "CLAUDE RULES\n");
  await Deno.mkdir(join(repo, "docs"));
  await Deno.symlink(join(repo, "CLAUDE.md"), join(repo, "docs", "AGENTS.md"));
  assert.deepEqual(contextFiles(join(repo, "docs"), {}), [
    join(repo, "CLAUDE.md"),
    join(repo, "docs", "AGENTS.md"),
  ]);
  assert.ok(!buildPrompt({ cwd: repo, env: {}, now: NOW }).text.includes("hunter2"));
});

Deno.test("contextFiles(): in a repository that holds HOME, a file may not link out of its folder", async () => {
  await using dir = await tempDir();
  // HOME is a dotfiles repository; a downloaded folder inside it links to the person's key.
  const home = join(dir.path, "home");
  await tree(home, {
    ".git/HEAD": "x\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n",
    "Downloads/evil/README": "a tarball\n",
    "Downloads/ok/AGENTS.md": "OWN RULES\n",
  });
  const evil = join(home, "Downloads", "evil");
  await Deno.symlink("../../.ssh/id_ed25519", join(evil, "AGENTS.md"));
  await Deno.symlink("AGENTS.md", join(home, "Downloads", "ok", "CLAUDE.md"));
  assert.deepEqual(contextFiles(evil, { HOME: home }), []);
  assert.ok(
    !buildPrompt({ cwd: evil, env: { HOME: home }, now: NOW }).text.includes("PRIVATE KEY"),
  );
  // A link inside its own folder still counts.
  const ok = join(home, "Downloads", "ok");
  await Deno.remove(join(ok, "AGENTS.md"));
  await Deno.writeTextFile(join(ok, "RULES.md"), "OWN RULES\n");
  await Deno.symlink("RULES.md", join(ok, "AGENTS.md"));
  assert.deepEqual(contextFiles(ok, { HOME: home }), [join(ok, "AGENTS.md")]);
});
