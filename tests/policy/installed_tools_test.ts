import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

Deno.test("an installed tool given a path outside the roots is refused before it runs", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const outside = join(dir.path, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "c.json"), '{"password": "hunter2"}');
  await Deno.writeTextFile(join(root, "c.json"), '{"name": "inside"}');
  await using t = await testRuntime({ cwd: root, config: { roots: [root] } });
  for (const file of [join(outside, "c.json"), "../outside/c.json", "/etc/passwd"]) {
    const r = await runTool(t.rt, { name: "json-query", args: { file }, caller: "model" });
    assert.equal(r.is_error, true, file);
    assert.match(r.said, /deny by rule "outside-roots-tools"/);
    assert.ok(!r.said.includes("hunter2"));
  }
  const inside = await runTool(t.rt, {
    name: "json-query",
    args: { file: "c.json", path: "name" },
    caller: "model",
  });
  assert.equal(inside.said, '"inside"\n');
  const away = await runTool(t.rt, {
    name: "wc-lines",
    args: { path: "c.json", cwd: outside },
    caller: "model",
  });
  assert.match(away.said, /deny by rule "outside-roots-tools"/);
});

Deno.test("a path outside the roots inside an option word is refused too: --x=/p, -C/p, @/p, in lists and objects", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  await using t = await testRuntime({ cwd: root, config: { roots: [root] } });
  const { judge: decide } = await import("../../lib/policy/facts.ts");
  const judge = (args: Record<string, unknown>) =>
    decide(t.rt.policy, { tool: "some-tool", source: "tools_dir", args, cwd: root }).decision;
  for (
    const word of [
      "--directory=/etc",
      "if=/etc/passwd",
      "-C/etc",
      "-xzf/tmp/../etc/a.tar",
      "-C../",
      "@/etc/passwd",
      "--file=~/.ssh/id_rsa",
    ]
  ) {
    assert.equal(judge({ args: [word] }), "deny", word);
    assert.equal(judge({ nested: { deeper: [word] } }), "deny", word);
  }
  for (const word of ["--verbose", "-C", "a=b", "--name=x/y", "-xzf", "@mention", "-Cdir"]) {
    assert.equal(judge({ args: [word] }), "allow", word);
  }
});
