/**
 * The corpus (SPEC S8.1): attempts to get a command or a path past the default policy.
 * Each must end `deny` or `ask` — never `allow` — and, made by a model with no person to
 * ask, must come back as an error result without running anything.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { judge } from "../../lib/policy/facts.ts";
import { tempDir, testRuntime } from "../helpers.ts";

type Attempt = [tool: string, args: Record<string, unknown>, expect: "deny" | "ask"];

const run = (command: string, expect: "deny" | "ask"): Attempt => ["run", { command }, expect];

const ATTEMPTS: Attempt[] = [
  // Flag reordering and splitting: rm is not on the read-only list in any spelling.
  run("rm -rf victim", "ask"),
  run("rm -fr victim", "ask"),
  run("rm -r -f victim", "ask"),
  // Each wrapper.
  run("timeout -s KILL 5 rm victim", "ask"),
  run("nice -n 5 rm victim", "ask"),
  run("env FOO=1 rm victim", "ask"),
  run("nohup rm victim", "ask"),
  run("stdbuf -o0 rm victim", "ask"),
  run("time rm victim", "ask"),
  run("command rm victim", "ask"),
  run("exec rm victim", "ask"),
  run("xargs rm < list", "ask"),
  run("find . -name victim | xargs -0 ls", "ask"),
  run("env -S 'rm victim'", "ask"),
  // Nested shells.
  run("sh -c 'rm victim'", "ask"),
  run(`bash -c "sh -c 'rm victim'"`, "ask"),
  run("bash -lc 'rm victim'", "ask"),
  run("busybox sh -c 'rm victim'", "ask"),
  run('bash -c "$CMD"', "ask"),
  run("eval 'rm victim'", "ask"),
  run("f() { rm victim; }; f", "ask"),
  // Substitutions and lists.
  run("echo $(rm victim)", "ask"),
  run("echo `rm victim`", "ask"),
  run("ls; rm victim", "ask"),
  run("ls && rm victim", "ask"),
  run("false || rm victim", "ask"),
  run("ls | rm victim", "ask"),
  run("(rm victim)", "ask"),
  run("{ rm victim; }", "ask"),
  run("cat <(rm victim)", "ask"),
  // git -C and friends.
  run("git -C ../outside status", "deny"),
  run("git -C .. status", "deny"),
  run("git diff --output=../outside/x", "deny"),
  run("git diff --output=diff.txt", "ask"),
  run("git diff --out=diff.txt", "ask"),
  run("git -c alias.x='!rm victim' x", "ask"),
  run("find . -exec rm {} ;", "ask"),
  // From the issue: find reads its expression after `--`; abbreviated and unknown options.
  run("find -- . -exec rm victim ;", "ask"),
  run("find -- . -delete", "ask"),
  run("wc --files0-from=victim", "ask"),
  run("wc --files0=victim", "ask"),
  run("ls --dere escape", "deny"),
  run("ls --zzz", "ask"),
  run("git -c core.fsmonitor='touch victim' status", "ask"),
  run("git --work-tree=. status", "ask"),
  run("git st", "ask"),
  run("strace -o victim ls", "ask"),
  run("unshare -r ls", "ask"),
  run("find . -delete", "ask"),
  // Following symlinks reads wherever they point: a symlink in the roots can lead out.
  run("grep -R secret .", "ask"),
  run("grep -nR secret .", "ask"),
  run("find -L . -name s.txt", "ask"),
  run("find . -follow -name s.txt", "ask"),
  // From a review: arithmetic in [[ ]] runs a command substitution hidden in a literal.
  run("[[ 'a[$(touch victim)]' -eq 0 ]]", "ask"),
  run("if [[ 'a[$(touch victim)]' -gt 0 ]]; then ls; fi", "ask"),
  run("(( a[$(touch victim)] ))", "ask"),
  // time's -o writes a file (here git's config, which git status would then obey).
  run('nice time -a -f "[core] fsmonitor = touch victim" -o .git/config true', "ask"),
  run("env time -o .git/config true", "ask"),
  // >&WORD redirects to a file when WORD is not a number.
  run("echo x >&victim", "ask"),
  run("ls >&/etc/victim", "deny"),
  // Globs may match symlinks that lead out of the roots.
  run("cat ./*", "ask"),
  run("head ./l*", "ask"),
  run("ls -RL", "ask"),
  run("du -aL", "ask"),
  // Paths out of the roots: .., absolute, ~, symlinks, redirections, cd.
  run("cat ../outside/secret.txt", "deny"),
  run("cat escape/secret.txt", "deny"),
  run("cat leak", "deny"), // a symlink with no / in its name
  run("cd escape && cat secret.txt", "deny"),
  run("git --config-env=core.pager=X log", "ask"),
  run("cat /etc/passwd", "deny"),
  run("ls ~", "deny"),
  run("cd .. && cat outside/secret.txt", "deny"),
  run("ls > ../outside/pwned", "deny"),
  run("cat < /etc/passwd", "deny"),
  run("/usr/bin/time -o ../outside/pwned ls", "deny"),
  run("xargs -a /etc/passwd echo", "deny"),
  run("git status; sudo rm -rf /", "deny"),
  run("ls -- ../outside", "deny"),
  run("echo hi > notes.txt", "ask"),
  // Words only bash knows.
  run("ls $(printf /etc)", "deny"),
  run("ls $HOME/x", "ask"),
  run("cat {/etc/passwd,ok.txt}", "ask"),
  run("ls .*/", "ask"),
  run("echo 'unterminated", "ask"),
  // Programs that are not what they seem.
  run("ls", "ask"), // PATH: bin/ls inside the roots comes first
  run("cat ok.txt", "ask"), // PATH: bin/cat is a symlink to rm
  run("./bin/ls", "ask"),
  run("PATH=./bin ls", "ask"),
  run("env PATH=./bin sh -c ls", "ask"),
  run("PATH=./bin; ls", "ask"),
  run("export PATH=./bin; ls", "ask"),
  run("LD_PRELOAD=./evil.so wc ok.txt", "ask"),
  // A wrapper that is not the program it claims to be: it runs, whatever it wraps.
  run("./timeout 5 wc ok.txt", "ask"), // ./timeout: a script in the roots
  run("nohup wc ok.txt", "ask"), // PATH: bin/nohup inside the roots comes first
  run("./sh -c 'wc ok.txt'", "ask"),
  ["run", { command: "pwd", cwd: "../outside" }, "deny"],
  ["run", { command: "ls", cwd: "escape" }, "deny"],
  // File builtins.
  ["read", { path: "../outside/secret.txt" }, "deny"],
  ["read", { path: "escape/secret.txt" }, "deny"],
  ["grep", { pattern: "secret", paths: ["escape"] }, "deny"],
  ["write", { path: "../outside/pwned", content: "x" }, "deny"],
  ["write", { path: "victim", content: "x" }, "ask"],
  ["edit", { path: "victim", old_string: "keep", new_string: "gone" }, "ask"],
];

Deno.test("the corpus: every attempt is denied or asked, and none runs", async () => {
  assert.ok(ATTEMPTS.length >= 40);
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const outside = join(dir.path, "outside");
  await Deno.mkdir(join(root, "bin"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.mkdir(join(dir.path, "home"));
  await Deno.writeTextFile(join(outside, "secret.txt"), "secret\n");
  await Deno.writeTextFile(join(root, "ok.txt"), "fine\n");
  await Deno.writeTextFile(join(root, "victim"), "keep\n");
  await Deno.symlink(outside, join(root, "escape"));
  await Deno.symlink(join(outside, "secret.txt"), join(root, "leak"));
  // A PATH entry inside the roots shadowing allowed programs.
  const pwned = join(outside, "pwned");
  await Deno.writeTextFile(join(root, "bin", "ls"), `#!/bin/sh\necho owned > '${pwned}'\n`);
  await Deno.chmod(join(root, "bin", "ls"), 0o755);
  await Deno.symlink(Deno.realPathSync("/bin/rm"), join(root, "bin", "cat"));
  for (const fake of [join(root, "timeout"), join(root, "sh"), join(root, "bin", "nohup")]) {
    await Deno.writeTextFile(fake, `#!/bin/sh\necho owned > '${pwned}'\n`, { mode: 0o755 });
  }

  await using t = await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root] },
    env: { HOME: join(dir.path, "home"), PATH: `${join(root, "bin")}:${Deno.env.get("PATH")}` },
  });
  const problems: string[] = [];
  for (const [tool, args, expect] of ATTEMPTS) {
    const verdict = judge(t.rt.policy, {
      tool,
      source: "builtin",
      args,
      cwd: root,
      path: `${join(root, "bin")}:${Deno.env.get("PATH")}`,
    });
    if (verdict.decision !== expect) {
      problems.push(`${tool} ${JSON.stringify(args)}: ${verdict.decision} (${verdict.reason})`);
    }
    const result = await runTool(t.rt, { name: tool, args, caller: "model" });
    if (!result.is_error || !/by the policy/.test(result.said)) {
      problems.push(`${tool} ${JSON.stringify(args)} ran: ${result.said}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(await Deno.readTextFile(join(root, "victim")), "keep\n");
  assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
});

Deno.test("the default allow-list runs read-only commands inside the roots", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "a.txt"), "one\ntwo\n");
  await using t = await testRuntime({
    cwd: dir.path,
    config: { shipped_tools: false, roots: [dir.path] },
  });
  for (const command of ["ls", "wc -l a.txt | cat", "git status --short || true", "cat -n a.txt"]) {
    const v = judge(t.rt.policy, {
      tool: "run",
      source: "builtin",
      args: { command },
      cwd: dir.path,
    });
    assert.equal(v.decision, "allow", `${command}: ${v.reason}`);
  }
  const r = await runTool(t.rt, { name: "run", args: { command: "wc -l a.txt" }, caller: "model" });
  assert.equal(r.is_error, false, r.said);
  assert.match(r.said, /2 a.txt/);
  const read = await runTool(t.rt, { name: "read", args: { path: "a.txt" }, caller: "model" });
  assert.equal(read.is_error, false, read.said);
});

Deno.test("after an approved cd out of the roots, even ls is denied there", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  await using t = await testRuntime({
    cwd: root,
    config: { shipped_tools: false, roots: [root] },
  });
  const cd = await runTool(t.rt, { name: "run", args: { command: "cd .." }, caller: "person" });
  // The person's own call: `cd ..` leaves the roots, which the policy denies even then.
  assert.equal(cd.is_error, true);
  t.rt.session.cwd = dir.path; // as if an earlier, looser policy had let it through
  const ls = await runTool(t.rt, { name: "run", args: { command: "ls" }, caller: "model" });
  assert.equal(ls.is_error, true);
  assert.match(ls.said, /denied by the policy — deny by rule "outside-roots"/);
});
