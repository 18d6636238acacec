import assert from "node:assert/strict";
import { join } from "node:path";
import { magiCommand, tempDir, TESTDATA } from "../helpers.ts";

/** Runs `magi call gib` for `mib` MiB of output and returns magi's peak resident memory in bytes. */
async function peakRss(mib: number, home: string): Promise<{ peak: number; spill: string | null }> {
  const child = magiCommand(
    [
      "call",
      "gib",
      JSON.stringify({ args: [String(mib)] }),
      "--json",
      "--tools-dir",
      join(TESTDATA, "big-tools"),
    ],
    {
      env: {
        XDG_CONFIG_HOME: join(home, "config"),
        XDG_CACHE_HOME: join(home, "cache"),
        XDG_STATE_HOME: join(home, "state"),
      },
      stdout: "piped",
    },
  ).spawn();
  let peak = 0;
  const poll = setInterval(() => {
    try {
      const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
    } catch {
      // The process has ended.
    }
  }, 10);
  const out = await child.output();
  clearInterval(poll);
  const result = JSON.parse(new TextDecoder().decode(out.stdout));
  return { peak, spill: result.spill };
}

Deno.test("1 GiB of output grows magi's memory by less than 64 MiB; its spill file stops at 256 MiB", async () => {
  await using home = await tempDir();
  const small = await peakRss(1, home.path);
  const big = await peakRss(1024, home.path);
  assert.ok(big.spill, "the output was spilled");
  // limits.spill_bytes (256 MiB by default): the head and the tail, and a note between.
  const size = (await Deno.stat(big.spill)).size;
  assert.ok(size > 256 * 1048576 && size < 256 * 1048576 + 200, `${size}`);
  await Deno.remove(big.spill);
  const growth = big.peak - small.peak;
  console.log(
    `peak RSS: ${(small.peak / 1048576).toFixed(1)} MiB for 1 MiB of output, ` +
      `${(big.peak / 1048576).toFixed(1)} MiB for 1 GiB (growth ${
        (growth / 1048576).toFixed(1)
      } MiB)`,
  );
  assert.ok(growth < 64 * 1048576, `memory grew by ${growth} bytes`);
});
