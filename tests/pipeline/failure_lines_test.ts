/**
 * The failing line survives bounding in what the model reads, as a person runs it: a test
 * run's "0 errors" summaries do not crowd it out, and a long line keeps the text around
 * the word found.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";

const SCRIPT =
  `i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo "test_$i ... ok (0 errors, 0 warnings)"; done
echo "FAIL: test_real_failure - AssertionError"
i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo "test_b$i ... ok (0 errors, 0 failed)"; done
head -c 5000 /dev/zero | tr '\\0' x; echo " error: the real one"
i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo "test_c$i ... ok"; done
`;

Deno.test({
  name: "magi call: the real failing lines reach said past 4000 '0 errors' lines, the match kept",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    await Deno.writeTextFile(join(dir.path, "fl.sh"), SCRIPT);
    const run = await magi(["call", "--json", "run", '{"command":"sh fl.sh"}'], {
      cwd: dir.path,
    });
    assert.equal(run.code, 0, run.stderr);
    const { said } = JSON.parse(run.stdout);
    assert.match(said, /\[magi: failure-looking lines from the dropped part\]/);
    assert.match(said, / {2}line 2001: FAIL: test_real_failure - AssertionError\n/);
    assert.match(said, / {2}line 4002: …x+ error: the real one\n/);
    assert.doesNotMatch(said, / {2}line \d+: test_\w+ \.\.\. ok/);
  },
});
