import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { judge as decide } from "../../lib/policy/facts.ts";
import { commandPattern, matchCommand } from "../../lib/policy/rules.ts";
import { readLine } from "../../lib/policy/shell.ts";
import { magi, tempDir, TESTDATA, testRuntime, writeConfig } from "../helpers.ts";

const one = (line: string) => readLine(line).commands[0];

Deno.test("commandPattern() matches flags in any order and spelling, words in order", () => {
  const rmr = commandPattern("rm -r *");
  for (const line of ["rm -rf x", "rm -fr x", "rm -r -f x", "rm x -r", "/bin/rm -R -r y"]) {
    assert.ok(matchCommand(rmr, one(line)), line);
  }
  assert.ok(!matchCommand(rmr, one("rm -f x")));
  const status = commandPattern("git status");
  assert.ok(matchCommand(status, one("git status")));
  assert.ok(matchCommand(status, one("git -C sub status")));
  assert.ok(!matchCommand(status, one("git status --porcelain")));
  assert.ok(matchCommand(commandPattern("git status *"), one("git status --porcelain")));
  assert.ok(matchCommand(commandPattern("npm test *"), one("timeout 60 npm test -- --watch")));
});

Deno.test("the strictest rule wins whatever the order; disable drops a default rule", async () => {
  await using dir = await tempDir();
  const allowFirst = {
    shipped_tools: false,
    roots: [dir.path],
    policy: {
      rules: [
        { tool: "run", command: "npm *", decision: "allow" },
        { id: "no-publish", tool: "run", command: "npm publish *", decision: "deny" },
      ],
    },
  };
  await using t = await testRuntime({ cwd: dir.path, config: allowFirst });
  const judge = (command: string) =>
    decide(t.rt.policy, { tool: "run", source: "builtin", args: { command }, cwd: dir.path });
  assert.equal(judge("npm test").decision, "allow");
  const v = judge("npm test && npm publish --tag x");
  assert.equal(v.decision, "deny");
  assert.equal(v.rule?.id, "no-publish");
  await using loose = await testRuntime({
    cwd: dir.path,
    config: {
      shipped_tools: false,
      roots: [dir.path],
      policy: {
        disable: ["write-inside-roots"],
        rules: [{ tool: "write", where: "inside_roots", decision: "allow" }],
      },
    },
  });
  const w = decide(loose.rt.policy, {
    tool: "write",
    source: "builtin",
    args: { path: "a.txt", content: "" },
    cwd: dir.path,
  });
  assert.equal(w.decision, "allow");
});

Deno.test("a rule's examples are checked when the config loads; a failing one is a config error", async () => {
  await using dir = await tempDir();
  const good = await writeConfig(dir.path, {
    shipped_tools: false,
    policy: {
      rules: [{
        tool: "run",
        command: "git push *",
        decision: "deny",
        examples: {
          match: [{ command: "git push origin main" }],
          no_match: [{ command: "git pull" }],
        },
      }],
    },
  });
  const ok = await magi(
    ["policy", "explain", "run", '{"command":"git push -f"}', "--config", good],
    {
      cwd: dir.path,
    },
  );
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(
    ok.stdout,
    'deny by rule "rule 1" (' + good + "): the call matches it: `git push -f`\n" +
      "a model's call: deny\n",
  );
  const bad = await writeConfig(dir.path, {
    shipped_tools: false,
    policy: {
      rules: [{
        id: "pushes",
        tool: "run",
        command: "git push",
        decision: "deny",
        examples: { match: [{ command: "git push origin main" }] },
      }],
    },
  });
  const failed = await magi(["tools", "--config", bad], { cwd: dir.path });
  assert.equal(failed.code, 2);
  assert.match(
    failed.stderr,
    /rule "pushes": example \{"command":"git push origin main"\} does not match the rule \(examples\.match\)/,
  );
});

Deno.test("magi policy explain prints the decision and the rule", async () => {
  await using dir = await tempDir();
  const run = await magi(["policy", "explain", "read", '{"path":"/etc/hostname"}'], {
    cwd: dir.path,
  });
  assert.equal(run.code, 0, run.stderr);
  // The roots are listed: the person sees where the tool may go.
  const real = await Deno.realPath(dir.path);
  assert.ok(
    run.stdout.startsWith(
      `deny by rule "outside-roots" (default): a path outside the roots (roots: ${real}, `,
    ),
    run.stdout,
  );
  const json = await magi(["policy", "explain", "run", '{"command":"rm -rf x"}', "--json"], {
    cwd: dir.path,
  });
  // The door's ruling for a model: asked; approved, it runs in workspace-write.
  assert.deepEqual(JSON.parse(json.stdout), {
    decision: "ask",
    rule: null,
    reason: "no rule allows it: `rm -rf x`",
    door: { caller: "model", decision: "ask", sandbox: "workspace-write" },
  });
});

Deno.test("magi call counts ask as approved; --as-model denies it, naming the rule; deny holds for both", async () => {
  await using dir = await tempDir();
  const byHand = await magi(["call", "write", '{"path":"a.txt","content":"x"}'], { cwd: dir.path });
  assert.equal(byHand.code, 0, byHand.stdout + byHand.stderr);
  const asModel = await magi(
    ["call", "--as-model", "--json", "write", '{"path":"b.txt","content":"x"}'],
    { cwd: dir.path },
  );
  assert.equal(asModel.code, 1);
  assert.match(
    JSON.parse(asModel.stdout).said,
    /denied .*non-interactive.* rule "write-inside-roots"/,
  );
  await assert.rejects(Deno.stat(join(dir.path, "b.txt")));
  const denied = await magi(["call", "read", '{"path":"/etc/hostname"}'], { cwd: dir.path });
  assert.equal(denied.code, 1);
  assert.match(denied.stdout, /denied by the policy — deny by rule "outside-roots"/);
});

Deno.test("a question's resumed call is judged again with the answer merged in", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    config: {
      shipped_tools: false,
      lua_dirs: [join(TESTDATA, "lua", "ask")],
      policy: {
        rules: [{
          id: "no-red",
          tool: "lua_ask",
          fields: { answered: "red" },
          decision: "deny",
          examples: { match: [{ answered: "red" }], no_match: [{}] },
        }],
      },
    },
  });
  const answer = (text: string) => () => Promise.resolve(text);
  const blue = await runTool(t.rt, { name: "lua_ask", args: {}, answer: answer("blue") });
  assert.equal(blue.is_error, false, blue.said);
  assert.equal(blue.said, "colour: blue");
  for (const caller of ["model", "person"] as const) {
    const red = await runTool(t.rt, { name: "lua_ask", args: {}, answer: answer("red"), caller });
    assert.equal(red.is_error, true);
    assert.match(red.said, /denied by the policy — deny by rule "no-red"/);
  }
});

Deno.test("a Lua declaration re-describing run or write cannot skip the policy", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "keep.txt"), "keep\n");
  await using t = await testRuntime({
    cwd: dir.path,
    config: {
      shipped_tools: false,
      roots: [dir.path],
      lua_dirs: [join(TESTDATA, "policy", "lua")],
    },
  });
  const run = (command: string) =>
    runTool(t.rt, { name: "lua_run", args: { command }, caller: "model" });
  const ls = await run("ls");
  assert.equal(ls.is_error, false, ls.said);
  assert.match(ls.said, /keep\.txt/);
  const rm = await run("rm keep.txt");
  assert.equal(rm.is_error, true);
  assert.match(rm.said, /denied .*by the policy/);
  assert.equal(await Deno.readTextFile(join(dir.path, "keep.txt")), "keep\n");
  const write = await runTool(t.rt, {
    name: "lua_write",
    args: { path: "keep.txt", content: "gone" },
    caller: "model",
  });
  assert.equal(write.is_error, true);
  assert.match(write.said, /rule "write-inside-roots"/);
  const byHand = await runTool(t.rt, {
    name: "lua_write",
    args: { path: "new.txt", content: "ok" },
    caller: "person",
  });
  assert.equal(byHand.is_error, false, byHand.said);
});

Deno.test("a project's .magi/config.jsonc may tighten the policy, never loosen it", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".magi"));
  await Deno.writeTextFile(
    join(dir.path, ".magi", "config.jsonc"),
    JSON.stringify({
      policy: {
        disable: ["outside-roots"],
        rules: [
          { id: "open-rm", tool: "run", command: "rm *", decision: "allow" },
          { id: "no-cat", tool: "run", command: "cat *", decision: "deny" },
        ],
      },
    }),
  );
  const explain = (command: string) =>
    magi(["policy", "explain", "run", JSON.stringify({ command })], { cwd: dir.path });
  const rm = await explain("rm -rf x");
  assert.equal(rm.code, 0, rm.stderr);
  assert.match(rm.stdout, /^ask by no rule/);
  assert.match(
    rm.stderr,
    /a project's policy may only tighten; ignored its allow rule\(s\) "open-rm"/,
  );
  assert.match(rm.stderr, /ignored "policy.disable"/);
  assert.match((await explain("ls /etc")).stdout, /^deny by rule "outside-roots"/);
  assert.match((await explain("cat a.txt")).stdout, /^deny by rule "no-cat"/);
});

Deno.test("a peer's, an MCP server's or a project's tool that no rule allows is asked about, saying how to allow it", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({ cwd: dir.path, config: { shipped_tools: false } });
  const reason = (source: string) =>
    decide(t.rt.policy, { tool: "x", source, args: {}, cwd: dir.path }).reason;
  assert.match(reason("peer"), /no rule allows it \(a peer's tools .*"source": "peer"/);
  assert.match(reason("mcp"), /an MCP server's tools .*"SERVER__\*"/);
  assert.match(reason("project"), /came with the repository/);
});

Deno.test("magi policy explain refuses arguments the tool's schema refuses, as the gate never sees them", async () => {
  await using dir = await tempDir();
  const run = await magi(["policy", "explain", "run"], { cwd: dir.path });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /invalid arguments for "run": field "command" is required/);
  const withCwd = await magi(["policy", "explain", "read", '{"path":"a","cwd":"."}'], {
    cwd: dir.path,
  });
  assert.equal(withCwd.code, 0, withCwd.stderr);
  assert.match(withCwd.stdout, /^allow by rule "read-inside-roots"/);
});

Deno.test("/dev/null named as a program's file is no path outside the roots", async () => {
  await using dir = await tempDir();
  await using t = await testRuntime({
    cwd: dir.path,
    config: { shipped_tools: false, roots: [dir.path] },
  });
  const judge = (command: string) =>
    decide(t.rt.policy, { tool: "run", source: "builtin", args: { command }, cwd: dir.path });
  assert.equal(judge("cat /dev/null").decision, "allow");
  assert.notEqual(judge("curl -o /dev/null http://127.0.0.1:9/").reason, undefined);
  assert.doesNotMatch(judge("curl -o /dev/null http://127.0.0.1:9/").reason, /outside the roots/);
  assert.match(judge("cat /etc/passwd").reason, /outside the roots/);
});
