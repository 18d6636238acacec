/** What `magi.exec` gives Lua when a program runs past its time (host_api.ts execValues). */
import assert from "node:assert/strict";
import { execLimits, execValues } from "../../lib/exec/lua/host_api.ts";
import { tempDir } from "../helpers.ts";

Deno.test("an exec stopped at the call's remaining time names it in round seconds", async () => {
  await using dir = await tempDir();
  // What is left of a 1 s call when its body execs: 999 ms.
  const values = await execValues(
    { program: "sleep", args: ["5"], cwd: dir.path, timeoutMs: 999 },
    { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    execLimits(64 << 20),
  );
  assert.deepEqual(values, [false, `"sleep" did not finish within 1 s; it was stopped`]);
});
