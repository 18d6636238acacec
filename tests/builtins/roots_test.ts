import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

Deno.test("file builtins refuse paths escaping the roots by .., absolute path and symlink", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  const outside = join(dir.path, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "secret\n");
  await Deno.writeTextFile(join(root, "ok.txt"), "fine\n");
  await Deno.symlink(outside, join(root, "escape"));
  await using t = await builtinRuntime(root, { roots: [root] });
  const refusal = `outside the allowed roots ("${root}"); config key \`roots\` sets them\n`;

  const dotdot = await call(t.rt, "read", { path: "../outside/secret.txt" });
  assert.equal(dotdot.is_error, true);
  assert.equal(
    dotdot.said,
    `Cannot read "../outside/secret.txt" (it resolves to "${outside}/secret.txt"): ${refusal}`,
  );

  const absolute = await call(t.rt, "write", { path: join(outside, "new.txt"), content: "x" });
  assert.equal(absolute.said, `Cannot write "${outside}/new.txt": ${refusal}`);

  const link = await call(t.rt, "edit", {
    path: "escape/secret.txt",
    old_string: "secret",
    new_string: "leaked",
  });
  assert.equal(
    link.said,
    `Cannot edit "escape/secret.txt" (it resolves to "${outside}/secret.txt"): ${refusal}`,
  );

  const viaNewFile = await call(t.rt, "write", { path: "escape/sub/new.txt", content: "x" });
  assert.equal(viaNewFile.is_error, true);

  const search = await call(t.rt, "grep", { pattern: "secret", paths: ["escape", "../outside"] });
  assert.equal(search.is_error, true);
  assert.ok(!search.said.includes("secret.txt:1"), search.said);

  // Walking the root does not follow the symlink out of it either.
  const walked = await call(t.rt, "grep", { pattern: "secret|fine" });
  assert.equal(walked.said, "ok.txt:1:fine\n");

  assert.equal(await Deno.readTextFile(join(outside, "secret.txt")), "secret\n");
  assert.equal((await call(t.rt, "read", { path: "ok.txt" })).said, "1\tfine\n");
});

Deno.test("the default roots are the starting directory and the temp folder", async () => {
  await using dir = await tempDir();
  await using t = await builtinRuntime(dir.path);
  assert.deepEqual(t.rt.roots, [dir.path, await Deno.realPath(Deno.env.get("TMPDIR") || "/tmp")]);
  const r = await call(t.rt, "read", { path: "/etc/hostname" });
  assert.equal(r.is_error, true);
  assert.match(r.said, /^Cannot read "\/etc\/hostname": outside the allowed roots/);
});
