import assert from "node:assert/strict";
import { join } from "node:path";
import { checkPath } from "../../lib/policy/roots.ts";
import { sessionTempDir } from "../../lib/confinement/session_temp.ts";
import { systemTempDir } from "../../lib/core/temp.ts";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

/** A project folder with a symlink leading out of it, and a folder outside. */
async function layout(base: string) {
  const root = join(base, "project");
  const outside = join(base, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "secret\n");
  await Deno.writeTextFile(join(root, "ok.txt"), "fine\n");
  await Deno.symlink(outside, join(root, "escape"));
  return { root, outside };
}

Deno.test("checkPath() refuses .., absolute paths and symlinks out of the roots, naming them", async () => {
  await using dir = await tempDir();
  const { root, outside } = await layout(dir.path);
  const roots = [root, "/nonexistent-root"];
  const named =
    `outside the allowed roots ("${root}", "/nonexistent-root"); config key \`roots\` sets them`;
  assert.equal(
    checkPath("../outside/secret.txt", root, roots, "read"),
    `Cannot read "../outside/secret.txt" (it resolves to "${outside}/secret.txt"): ${named}`,
  );
  assert.equal(
    checkPath(`${outside}/new.txt`, root, roots, "write"),
    `Cannot write "${outside}/new.txt": ${named}`,
  );
  assert.equal(
    checkPath("escape/secret.txt", root, roots, "edit"),
    `Cannot edit "escape/secret.txt" (it resolves to "${outside}/secret.txt"): ${named}`,
  );
  // Not made yet, under a symlinked folder: the nearest existing folder is resolved.
  assert.equal(typeof checkPath("escape/a/b.txt", root, roots, "write"), "string");
  assert.deepEqual(checkPath("sub/../ok.txt", root, roots, "read"), { real: `${root}/ok.txt` });
  assert.deepEqual(checkPath("new/x.txt", root, roots, "write"), { real: `${root}/new/x.txt` });
});

Deno.test("file builtins refuse paths escaping the roots and leave the files alone", async () => {
  await using dir = await tempDir();
  const { root, outside } = await layout(dir.path);
  await using t = await builtinRuntime(root, { roots: [root] });
  // The builtin's own check names the roots; a policy in front of it may refuse first.
  const refused = /outside the (allowed )?roots/;
  const calls: [string, Record<string, unknown>][] = [
    ["read", { path: "../outside/secret.txt" }],
    ["write", { path: join(outside, "new.txt"), content: "x" }],
    ["edit", { path: "escape/secret.txt", old_string: "secret", new_string: "leaked" }],
    ["write", { path: "escape/sub/new.txt", content: "x" }],
    ["grep", { pattern: "secret", paths: ["escape", "../outside"] }],
  ];
  for (const [name, args] of calls) {
    const r = await call(t.rt, name, args);
    assert.equal(r.is_error, true, `${name} ${JSON.stringify(args)}: ${r.said}`);
    assert.match(r.said, refused);
    assert.ok(!r.said.includes("secret.txt:1"), r.said);
  }
  // Walking the root does not follow the symlink out of it either.
  assert.equal((await call(t.rt, "grep", { pattern: "secret|fine" })).said, "ok.txt:1:fine\n");
  assert.equal(await Deno.readTextFile(join(outside, "secret.txt")), "secret\n");
  assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
  assert.equal((await call(t.rt, "read", { path: "ok.txt" })).said, "1\tfine\n");
});

Deno.test("the default roots are the starting directory and the session's temp folder", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  // Never the shared system temp folder: other programs' repositories lie there.
  assert.deepEqual(t.rt.roots, [dir.path, sessionTempDir()]);
  const shared = await call(t.rt, "write", { path: join(systemTempDir(), "x"), content: "x" });
  assert.equal(shared.is_error, true);
  assert.match(shared.said, /outside the (allowed )?roots/);
  const r = await call(t.rt, "read", { path: "/etc/hostname" });
  assert.equal(r.is_error, true);
  assert.match(r.said, /outside the (allowed )?roots/);
});
