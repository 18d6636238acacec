import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

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

Deno.test("a path outside the roots inside a list in a word is refused: --files=a,/p, a:/p, JSON", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const outside = join(dir.path, "outside");
  const tools = join(dir.path, "tools");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "outside-secret-4217\n");
  await Deno.writeTextFile(join(root, "a.txt"), "inside-text\n");
  // A tool that prints each file of its comma-separated --files list, as many tools read one.
  await makeTool(
    tools,
    "catall",
    `#!/bin/sh
if [ "$1" = "--help" ]; then echo "catall: prints the files of a list"; echo "usage: catall [--files=LIST]"; exit 0; fi
for a in "$@"; do case "$a" in --files=*) echo "\${a#--files=}" | tr , '\\n' | while read -r f; do cat "$f"; done;; esac; done
`,
  );
  await using t = await testRuntime({ cwd: root, toolsDirs: [tools], config: { roots: [root] } });
  const call = (word: string) =>
    runTool(t.rt, { name: "catall", args: { args: [word] }, caller: "model" });
  const inside = await call("--files=a.txt");
  assert.equal(inside.is_error, false, inside.said);
  assert.match(inside.said, /inside-text/);
  const secret = join(outside, "secret.txt");
  const refused = await call(`--files=a.txt,${secret}`);
  assert.equal(refused.is_error, true, refused.said);
  assert.match(refused.said, /deny by rule "outside-roots-tools"/);
  assert.ok(!refused.said.includes("outside-secret-4217"), refused.said);

  const { judge: decide } = await import("../../lib/policy/facts.ts");
  const judge = (args: Record<string, unknown>) =>
    decide(t.rt.policy, { tool: "some-tool", source: "tools_dir", args, cwd: root }).decision;
  for (
    const word of [
      "--files=a,/etc/passwd",
      "a:/etc/passwd",
      "x=a:/etc",
      "a;~/.ssh/id_rsa",
      "--include=a,b,../x",
      "--list=a,file:///etc/passwd",
      "k=a,l=/etc",
      "http://example.com/a,/etc/passwd",
      '{"path": "/etc/passwd"}',
      '["a", {"deep": "x:/etc"}]',
    ]
  ) {
    assert.equal(judge({ args: [word] }), "deny", word);
  }
  for (
    const word of [
      "http://example.com/a/b",
      "https://example.com:8443/x/y?q=1",
      "--url=https://a.example/x,https://b.example/y",
      "git@github.com:owner/repo.git",
      "a,b,c",
      "12:30:00",
      "--exclude=node_modules,dist",
      '{"name": "x/y"}',
    ]
  ) {
    assert.equal(judge({ args: [word] }), "allow", word);
  }
});
