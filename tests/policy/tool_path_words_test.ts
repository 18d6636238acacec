/**
 * An installed tool's words that name a file outside the roots in other spellings are
 * refused — a `file:` URL (curl, git and pandoc read them), curl's `@FILE` attached to an
 * option (`-d@/x`, `--data=@/x`) — while ordinary words are not: web URLs, dates, regexes,
 * and `@/…` that names no file (a JavaScript import alias).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, testRuntime } from "../helpers.ts";
import { judge as decide } from "../../lib/policy/facts.ts";

Deno.test("file: URLs and curl's @FILE in option words are judged as paths; other words are not", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  await using t = await testRuntime({ cwd: root, config: { roots: [root] } });
  const judge = (word: string) =>
    decide(t.rt.policy, {
      tool: "some-tool",
      source: "tools_dir",
      args: { args: [word] },
      cwd: root,
    })
      .decision;
  for (
    const word of [
      "file:///etc/passwd",
      "FILE:/etc/passwd",
      "file://localhost/etc/passwd",
      "file:///%65tc/passwd",
      "--url=file:///etc/passwd",
      "-d@/etc/passwd",
      "--data=@/etc/passwd",
      "@/etc/passwd",
    ]
  ) {
    assert.equal(judge(word), "deny", word);
  }
  for (
    const word of [
      `file://${root}/notes.txt`,
      "https://example.com/a/../b",
      "--url=https://example.com/api/v1",
      "^/api",
      "2024/01/02",
      "--since=2024/01/01",
      "key=value",
      "@/components/Button",
      "@scope/package",
    ]
  ) {
    assert.equal(judge(word), "allow", word);
  }
});
