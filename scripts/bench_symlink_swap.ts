/**
 * The symlink-swap race, measured: `deno run -A scripts/bench_symlink_swap.ts [calls]
 * [bash|perl] [rounds]` runs `calls` calls each of read, write, edit and grep while a real
 * process swaps a folder for a symlink to an outside folder (see tests/builtins/swap.ts), and
 * prints per builtin how many succeeded, were refused and escaped (must be 0), and whether
 * any outside file changed.
 *
 * @module
 */
import { swapRace } from "../tests/builtins/swap.ts";
import { closeBodyWorkers } from "../lib/sources/builtins/body_worker.ts";

const calls = Number(Deno.args[0] ?? 200);
const swapper = Deno.args[1] === "perl" ? "perl" : "bash";
const rounds = Number(Deno.args[2] ?? 1);
for (let round = 0; round < rounds; round++) {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-swap-" }));
  try {
    const race = await swapRace(base, { calls, swapper });
    const rows = Object.entries(race.counts).map(([name, c]) =>
      `${name}: ${c.ok} ok, ${c.error} refused, ${c.escaped} escaped, ${
        (c.ms / (c.ok + c.error)).toFixed(1)
      } ms/call`
    );
    console.log(
      `round ${round + 1} (${swapper}, ${race.swaps} swaps): ${rows.join("; ")}; ` +
        `outside changed: ${race.outsideChanged.length ? race.outsideChanged.join(", ") : "none"}`,
    );
    for (const e of race.escapes) {
      const lines = e.split("\n").filter((l) => l.includes("OUTSIDE"));
      console.log("ESCAPE", e.split(":")[0], lines.join(" | ").slice(0, 300));
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}
closeBodyWorkers();
