/**
 * A folder swapped for a symlink to an outside folder, by a real process, as fast as it can,
 * while 200 calls each of `read`, `write`, `edit` and `grep` run: none reaches outside.
 */
import assert from "node:assert/strict";
import { tempDir } from "../helpers.ts";
import { swapRace } from "./swap.ts";

Deno.test("a folder swapped for a symlink in a loop never carries a file builtin outside the roots", async () => {
  await using dir = await tempDir();
  const race = await swapRace(dir.path, { calls: 200 });
  const detail = JSON.stringify({ ...race, errors: [...race.errors] }, null, 1);
  assert.deepEqual(race.escapes, [], detail);
  assert.deepEqual(race.outsideChanged, [], detail);
  // Every refusal is one clear line: the path changed or was missing meanwhile, it resolved
  // outside the roots when checked, or the policy refused it for that reason.
  const clear = new RegExp(
    [
      /^\w+: Cannot (read|write|edit|search) "d[^"]*": (the path changed while being \w+ \(a folder or file was swapped\); try again|no such file|a part of the path is not a directory|the folder "[^"]*" changed while the file was renamed into place)/,
      /^\w+: Cannot (read|write|edit|search) "d[^"]*" \(it resolves to "[^"]*\/outside(\/[^"]*)?"\): outside the allowed roots/,
      /^\w+: \[magi: denied by the policy .* a path outside the roots/,
      // A `write` made a new folder `d` while the real one was moved away.
      /^grep: \(no matches\)$/,
    ].map((re) => re.source).join("|"),
  );
  for (const line of race.errors.keys()) assert.match(line, clear, detail);
  for (const [name, count] of Object.entries(race.counts)) {
    assert.equal(count.ok + count.error, 200, `${name}: ${detail}`);
  }
  const ok = Object.values(race.counts).reduce((n, c) => n + c.ok, 0);
  assert.ok(ok > 0, `some calls succeeded on the inside files: ${detail}`);
  assert.equal(race.swapperStatus?.signal, "SIGKILL", "the swapper ran until it was killed");
  assert.ok(race.swaps > 0, "the swapper swapped");
});
