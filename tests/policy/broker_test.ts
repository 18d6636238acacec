/**
 * magi's permission broker: a Deno tool magi starts (asking for everything with -A) gets its
 * permission checks answered by the policy — a read inside the roots is allowed, outside is
 * refused with magi's reason, and only allowed programs start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

Deno.test("a Deno tool's reads and programs are answered by the policy through the broker", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "project");
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "inside.txt"), "inside the roots");
  await Deno.writeTextFile(join(dir.path, "outside.txt"), "outside the roots");
  await using t = await testRuntime({
    cwd: root,
    toolsDirs: [join(TESTDATA, "policy", "tools")],
    // The gate would refuse the outside path in the arguments first; this test is about the
    // broker, the line behind it.
    config: { shipped_tools: false, roots: [root], policy: { disable: ["outside-roots-tools"] } },
  });
  const call = (args: string[]) =>
    runTool(t.rt, { name: "deno-cat", args: { args }, caller: "model" });
  const inside = await call(["inside.txt"]);
  assert.equal(inside.is_error, false, inside.said);
  assert.match(inside.said, /^inside the roots/);
  const outside = await call([join(dir.path, "outside.txt")]);
  assert.equal(outside.is_error, true);
  assert.match(outside.said, /NotCapable: magi's policy: reading ".*outside\.txt" is outside/);
  // A symlink inside the roots to a folder outside: `link/..` is that folder's parent.
  await Deno.mkdir(join(dir.path, "away"));
  await Deno.symlink(join(dir.path, "away"), join(root, "link"));
  const dotted = await call(["link/../outside.txt"]);
  assert.equal(dotted.is_error, true, dotted.said);
  assert.match(dotted.said, /magi's policy: reading "link\/\.\.\/outside\.txt" is outside/);
  const whoami = Deno.realPathSync(
    new TextDecoder().decode(
      (await new Deno.Command("sh", { args: ["-c", "command -v whoami"], stdout: "piped" })
        .output()).stdout,
    ).trim(),
  );
  const listed = await call(["--run", whoami]);
  assert.equal(listed.is_error, false, listed.said);
  assert.match(listed.said, /^ran .*whoami: /);
  const unlisted = await call(["--run", Deno.realPathSync("/usr/bin/id")]);
  assert.equal(unlisted.is_error, true);
  assert.match(unlisted.said, /NotCapable: magi's policy: ".*id" is not an allowed program/);
  // A bare name: Deno looks it up on a PATH the tool chooses, where a file in the roots named
  // like an allowed program could stand first. It is refused, whatever it would find.
  await Deno.mkdir(join(root, "bin"));
  await Deno.writeTextFile(join(root, "bin", "whoami"), "#!/bin/sh\necho SHADOW\n", {
    mode: 0o755,
  });
  const bare = await call(["--run", "whoami"]);
  assert.equal(bare.is_error, true, bare.said);
  assert.match(bare.said, /magi's policy: start "whoami" by its absolute path/);
  assert.ok(!bare.said.includes("SHADOW"));
});
