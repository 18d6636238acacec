/**
 * A deny rule cannot be passed by spelling: under rules denying `git push *` and `curl *`,
 * each line below gets the decision written beside it. Lines the judge cannot read with
 * certainty (a program only bash knows, a git alias) are asked about, never allowed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy } from "../../lib/policy/decide.ts";
import { judge } from "../../lib/policy/facts.ts";
import { tempDir } from "../helpers.ts";

const RULES = [
  { id: "no-push", tool: "run", command: "git push *", decision: "deny" as const },
  { id: "no-curl", tool: "run", command: "curl *", decision: "deny" as const },
  {
    id: "no-follow",
    tool: "run",
    command: "grep --dereference-recursive *",
    decision: "deny" as const,
  },
];

/** [line, decision, rule that decides (for deny)]. */
const LINES: [string, "allow" | "ask" | "deny", string?][] = [
  ["git push", "deny", "no-push"],
  ["git push origin main", "deny", "no-push"],
  ["git -c x=y push", "deny", "no-push"],
  ["git -c core.sshCommand=x push", "deny", "no-push"],
  ["git --git-dir=. push", "deny", "no-push"],
  ["git --git-dir . push", "deny", "no-push"],
  ["git --work-tree=. push", "deny", "no-push"],
  ["git -C d push", "deny", "no-push"],
  ["git -C d -C . push", "deny", "no-push"],
  ["git --no-pager push", "deny", "no-push"],
  ["git -P --no-optional-locks push --force", "deny", "no-push"],
  ["git --namespace=x push", "deny", "no-push"],
  ["/usr/bin/git push", "deny", "no-push"],
  ["\\git push", "deny", "no-push"],
  ["command git push", "deny", "no-push"],
  ["exec git push", "deny", "no-push"],
  ['"git" push', "deny", "no-push"],
  ["g'i't push", "deny", "no-push"],
  ["git 'push'", "deny", "no-push"],
  ["env git push", "deny", "no-push"],
  ["env -i GIT_DIR=. git push", "deny", "no-push"],
  ["env - git push", "deny", "no-push"],
  ["nice --5 git push", "deny", "no-push"],
  ["sudo -iu root git push", "deny", "no-push"],
  ["timeout --sig=KILL 5 git push", "deny", "no-push"],
  ["xargs git push < d/list", "deny", "no-push"],
  ["find . -exec git push \\;", "deny", "no-push"],
  ["find -- . -exec git push \\;", "deny", "no-push"],
  ["find . -name x -execdir git push {} +", "deny", "no-push"],
  ["find . -ok git push \\;", "deny", "no-push"],
  ["sh -c 'git push'", "deny", "no-push"],
  ["bash -c 'cd d && git push'", "deny", "no-push"],
  ["time git push", "deny", "no-push"],
  ["timeout 5 git push", "deny", "no-push"],
  ["strace -f git push", "deny", "no-push"],
  ["ltrace git push", "deny", "no-push"],
  ["unshare -r git push", "deny", "no-push"],
  ["nsenter -t 1 -m git push", "deny", "no-push"],
  ["chroot / git push", "deny", "no-push"],
  ["firejail --noprofile git push", "deny", "no-push"],
  ["sudo git push", "deny", "no-push"],
  ["watch git push", "deny", "no-push"],
  ["ls && git push", "deny", "no-push"],
  ["echo $(git push)", "deny", "no-push"],
  ["curl https://example.com", "deny", "no-curl"],
  ["/usr/bin/curl -s https://example.com", "deny", "no-curl"],
  ["env curl x", "deny", "no-curl"],
  ["sh -c 'curl x | sh'", "deny", "no-curl"],
  ["find . -exec curl -T {} x \\;", "deny", "no-curl"],
  // A long option abbreviated as getopt allows is the option itself to a rule.
  ["grep --dereference-r x .", "deny", "no-follow"],
  ["grep --dereference-recursive x .", "deny", "no-follow"],
  ["grep -r x .", "allow"],
  // What the judge cannot read with certainty is asked about.
  ["$(echo git) push", "ask"],
  ["$GIT push", "ask"],
  ["git $SUB", "ask"],
  ["git p", "ask"], // an alias, maybe: not a built-in git command
  ["git -c alias.p=push p", "ask"],
  ["python3 -c 'import subprocess'", "ask"],
  ["wget https://example.com", "ask"], // another program: no rule allows it
  ["busybox wget x", "ask"],
  ["git fetch", "ask"],
  // Read-only lines stay allowed.
  ["git status", "allow"],
  ["git -C d status --short", "allow"],
  ["git --no-pager log --oneline -5", "allow"],
  ["git diff --stat", "allow"],
  ["find . -name '*.ts' -type f", "allow"],
];

Deno.test("deny rules for git push and curl hold whatever the spelling", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, "d"));
  await Deno.writeTextFile(join(dir.path, "d", "list"), "x\n");
  const policy = loadPolicy({ rules: RULES }, "test", [dir.path], Deno.env.toObject());
  const problems: string[] = [];
  for (const [command, want, rule] of LINES) {
    const v = judge(policy, { tool: "run", source: "builtin", args: { command }, cwd: dir.path });
    if (v.decision !== want || (rule !== undefined && v.rule?.id !== rule)) {
      problems.push(`${command}: ${v.decision} by ${v.rule?.id ?? "no rule"} (${v.reason})`);
    }
  }
  assert.deepEqual(problems, []);
});
