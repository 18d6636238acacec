/**
 * A Deno tool names the programs it starts by absolute path: a relative one (or one through
 * `/proc/self/cwd`) is opened from the folder `Deno.Command` is given, which the broker's
 * request does not show, so `bin/ls` with `bin` a symlink to the real ls's folder could start
 * `sub/bin/ls`, a file in the roots.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, TESTDATA, testRuntime } from "../helpers.ts";

Deno.test("a Deno tool cannot start a program by a path relative to a folder it picks", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  const ls = Deno.realPathSync(
    new TextDecoder().decode(new Deno.Command("which", { args: ["ls"] }).outputSync().stdout)
      .trim(),
  );
  await Deno.mkdir(join(root, "sub", "bin"), { recursive: true });
  await Deno.symlink(dirname(ls), join(root, "bin"));
  await Deno.symlink(dirname(ls), join(root, "sub", "real"));
  await Deno.writeTextFile(join(root, "sub", "bin", "ls"), "#!/bin/sh\necho SHADOW\n", {
    mode: 0o755,
  });
  await using t = await testRuntime({
    cwd: root,
    toolsDirs: [join(TESTDATA, "policy", "broker_tools")],
    // The gate would refuse the /proc paths in the arguments first; this test is the broker's.
    config: { shipped_tools: false, roots: [root], policy: { disable: ["outside-roots-tools"] } },
  });
  const call = (args: string[]) =>
    runTool(t.rt, { name: "deno-run-in", args: { args }, caller: "model" });
  for (const program of ["bin/ls", "./bin/ls", "/proc/self/cwd/bin/ls", "/dev/fd/../cwd/bin/ls"]) {
    const r = await call([program, "sub"]);
    assert.equal(r.is_error, true, `${program}: ${r.said}`);
    assert.ok(!r.said.includes("SHADOW"), `${program}: ${r.said}`);
    // (Deno itself asks for every permission before it opens a path through /proc.)
    assert.match(
      r.said,
      /NotCapable: (magi's policy: start ".*" by its absolute path|Requires all)/,
    );
  }
  // The real ls by its absolute path still starts, from any folder.
  const real = await call([ls, "sub"]);
  assert.equal(real.is_error, false, real.said);
  assert.match(real.said, /^ran .*ls: bin\s+real/);
});
