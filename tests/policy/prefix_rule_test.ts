import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy } from "../../lib/policy/decide.ts";
import { judge } from "../../lib/policy/facts.ts";
import { prefixRule, saveRunRule, withPrefixRules } from "../../lib/policy/prefix_rule.ts";
import { readConfigFile } from "../../lib/config/load.ts";
import { tempDir } from "../helpers.ts";

Deno.test("prefixRule() keeps the program and its subcommand words, then *", () => {
  const cases: [string, string | undefined][] = [
    ["npm test -- --watch", "npm test *"],
    ["npm test", "npm test *"],
    ["git status", "git status *"],
    ["git log --oneline -5", "git log *"],
    ["npm run build:prod", "npm run build:prod *"],
    ["cargo test --release foo", "cargo test *"],
    ["make", "make *"],
    ["cat a.txt", "cat *"],
    ["./gradlew test", "./gradlew test *"],
    ["docker compose up web db", "docker compose up *"],
    // Only one plain command gets a prefix; the rest keep the exact line.
    ["ls && rm x", undefined],
    ["ls | wc", undefined],
    ["FOO=1 npm test", undefined],
    ["timeout 5 npm test", undefined],
    ["$X test", undefined],
    ["npm test $(x)", undefined],
    ["echo 'unterminated", undefined],
  ];
  for (const [line, want] of cases) assert.equal(prefixRule(line), want, line);
});

Deno.test("withPrefixRules() allows what the rules cover, as a saved rule would", async () => {
  await using dir = await tempDir();
  const env = Deno.env.toObject();
  const base = loadPolicy(
    { rules: [{ tool: "run", command: "git push *", decision: "deny" }] },
    "test",
    [dir.path],
    env,
  );
  const policy = withPrefixRules(base, ["ls *", "git push *", "uname *"]);
  const decision = (command: string) =>
    judge(policy, { tool: "run", source: "builtin", args: { command }, cwd: dir.path }).decision;
  assert.equal(decision("ls -la"), "allow");
  assert.equal(decision("uname -a && ls"), "allow");
  assert.equal(decision("ls && rm x"), "ask");
  assert.equal(decision("git push"), "deny"); // a deny rule still denies
  assert.equal(decision("ls $X"), "ask"); // a word only bash knows
  assert.equal(decision("FOO=1 ls"), "ask");
  assert.equal(decision("ls --zzz"), "ask"); // an option the judge does not know
  assert.equal(decision("ls /"), "deny"); // outside the roots
  assert.equal(withPrefixRules(base, []), base);
});

Deno.test("saveRunRule() appends to policy.rules, keeping comments; creates a 0600 file", async () => {
  await using dir = await tempDir();
  const created = join(dir.path, "new", "magi", "config.jsonc");
  await saveRunRule(created, "npm test *");
  assert.equal((await Deno.stat(created)).mode! & 0o777, 0o600);
  assert.deepEqual(readConfigFile(created).policy, {
    rules: [{ tool: "run", command: ["npm test *"], decision: "allow" }],
  });

  const own = join(dir.path, "config.jsonc");
  await Deno.writeTextFile(
    own,
    '{\n  // the model I use\n  "provider": "x",\n  "policy": {\n    "rules": [\n' +
      '      // keep rm out\n      {"tool": "run", "command": "rm *", "decision": "deny"},\n' +
      "    ],\n  },\n}\n",
  );
  await saveRunRule(own, "git status *");
  const text = await Deno.readTextFile(own);
  assert.match(text, /\/\/ the model I use/);
  assert.match(text, /\/\/ keep rm out/);
  const rules = (readConfigFile(own).policy as { rules: unknown[] }).rules;
  assert.deepEqual(rules, [
    { tool: "run", command: "rm *", decision: "deny" },
    { tool: "run", command: ["git status *"], decision: "allow" },
  ]);

  const bad = join(dir.path, "bad.jsonc");
  await Deno.writeTextFile(bad, '{"policy": {"rules": 3}}');
  await assert.rejects(
    () => saveRunRule(bad, "x *"),
    /Cannot save the rule to ".*bad.jsonc": key "policy.rules" is not a list/,
  );
});
