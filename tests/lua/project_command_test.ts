/**
 * A project's `.magi/tools` declaration with `transport = "command"` names the program it
 * starts, and its arguments (x-magi literals): calling the tool by hand approves the tool,
 * not that program, which is judged as a Lua body's `magi.exec` is — a rule, or a person
 * asked. The person's own command declarations run as before.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const declaration = (name: string) =>
  `magi.tool("${name}", { description = "tidy up", transport = "command", program = "sh",\n` +
  `  needs = { ["x-magi"] = { argv = { { literal = "-c" }, ` +
  `{ literal = "touch ${name}.made; echo made" } } } } })\n`;

Deno.test("a project's command declaration asks about its program even in magi call", async () => {
  await using dir = await tempDir();
  const project = join(dir.path, "repo");
  const mine = join(dir.path, "mine");
  await Deno.mkdir(join(project, ".magi", "tools"), { recursive: true });
  await Deno.mkdir(mine);
  await Deno.writeTextFile(join(project, ".magi", "tools", "tidy.lua"), declaration("tidy"));
  await Deno.writeTextFile(join(mine, "own.lua"), declaration("own"));
  await using t = await testRuntime({ cwd: project, config: { lua_dirs: [mine] } });
  const byHand = await runTool(t.rt, { name: "tidy", args: {}, caller: "person" });
  assert.equal(byHand.is_error, true, byHand.said);
  assert.match(byHand.said, /"sh": denied .*even in magi call/);
  await assert.rejects(Deno.stat(join(project, "tidy.made")));
  // A person asked says yes: then it runs.
  const asked: string[] = [];
  const approved = await runTool(t.rt, {
    name: "tidy",
    args: {},
    caller: "person",
    approve: (r) => {
      asked.push(r.tool);
      return Promise.resolve("yes");
    },
  });
  assert.equal(approved.said.trim(), "made", approved.said);
  assert.deepEqual(asked, ["tidy (magi.exec)"]);
  await Deno.stat(join(project, "tidy.made"));
  // The person's own declaration: the person's call runs it.
  const own = await runTool(t.rt, { name: "own", args: {}, caller: "person" });
  assert.equal(own.said.trim(), "made", own.said);
});

Deno.test("a project's declaration reaching run asks about the command even in magi call", async () => {
  await using dir = await tempDir();
  const project = join(dir.path, "repo");
  await Deno.mkdir(join(project, ".magi", "tools"), { recursive: true });
  await Deno.writeTextFile(
    join(project, ".magi", "tools", "greet.lua"),
    'magi.tool("greet", { description = "say hello", transport = "builtin", builtin = "run" })\n',
  );
  await using t = await testRuntime({ cwd: project });
  const made = await runTool(t.rt, {
    name: "greet",
    args: { command: "touch made.txt" },
    caller: "person",
  });
  assert.equal(made.is_error, true, made.said);
  assert.match(made.said, /denied .*`touch made\.txt` \(a project's \.magi\/tools declaration/);
  await assert.rejects(Deno.stat(join(project, "made.txt")));
  // A command the policy allows runs; so does one a person asked approves.
  const listed = await runTool(t.rt, {
    name: "greet",
    args: { command: "echo hi" },
    caller: "person",
  });
  assert.equal(listed.said, "hi\n", listed.said);
  const approved = await runTool(t.rt, {
    name: "greet",
    args: { command: "touch made.txt" },
    caller: "person",
    approve: () => Promise.resolve("yes"),
  });
  assert.equal(approved.is_error, false, approved.said);
  await Deno.stat(join(project, "made.txt"));
});
