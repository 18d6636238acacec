/**
 * `run`'s working folder for later calls comes from the wrapper shell's own EXIT trap only: a
 * program of the call that writes the folder file itself — then kills the wrapper, or takes
 * away the wrapper's last file descriptors so its trap cannot write — moves nothing.
 * Unsandboxed and in the real bwrap sandbox.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { builtinRuntime, call } from "./helpers.ts";

/** A program that plants `$1` as the wrapper's final folder, then does `$2` to the wrapper. */
const PLANT = `#!/bin/sh
f=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | grep -o "/[^'[:space:]]*magi-pwd-[^'[:space:]]*" | head -n 1)
[ -n "$f" ] || { echo "no pwd file named"; exit 1; }
printf '%s\\n' "$1" >| "$f"
case $2 in
  kill) kill -9 $PPID ;;
  limit) prlimit --pid $PPID --nofile=3:3 ;;
esac
echo planted
`;

for (const mode of ["off", "workspace-write"] as const) {
  for (const how of ["kill", "limit"] as const) {
    Deno.test({
      name:
        `run (sandbox ${mode}): a program that plants the working folder (${how}) moves nothing`,
      fn: async () => {
        await using dir = await tempDir();
        const work = join(dir.path, "work");
        const elsewhere = join(dir.path, "elsewhere");
        await Deno.mkdir(work);
        await Deno.mkdir(elsewhere);
        await Deno.writeTextFile(join(work, "plant.sh"), PLANT);
        await using t = await builtinRuntime(work, {
          roots: [dir.path],
          "sandbox.mode": mode,
        });
        const r = await call(t.rt, "run", { command: `sh ./plant.sh ${elsewhere} ${how}; true` });
        if (how === "limit") assert.match(r.said, /planted/);
        assert.equal(t.rt.session.cwd, work, r.said);
        const next = await call(t.rt, "run", { command: "pwd" });
        assert.equal(next.said, work + "\n");
        // The wrapper's own `cd` still moves the session.
        await call(t.rt, "run", { command: `cd ${elsewhere}` });
        assert.equal(t.rt.session.cwd, elsewhere);
      },
    });
  }
}
