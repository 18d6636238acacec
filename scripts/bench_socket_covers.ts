/**
 * What many live unix sockets cost a sandboxed call: `run 'true'` inside workspace-write
 * against outside (as `bench_sandbox.ts`), with N listeners in a folder no walk reads (each is
 * found in `/proc/net/unix` and looked at per call, where unix sockets are allowed), and the
 * time of making one command alone, with `sandbox.unix_sockets` false (the default) and true.
 *
 * `deno run -A scripts/bench_socket_covers.ts [N...]` (default 0 and 1500).
 *
 * @module
 */
import { join } from "node:path";
import { benchEnv } from "./bench_env.ts";
import { sandboxAddedMs } from "./bench_sandbox.ts";
import { sandboxLauncher } from "../lib/confinement/sandbox.ts";

const counts = Deno.args.length > 0 ? Deno.args.map(Number) : [0, 1500];
const { home, env } = await benchEnv("magi-bench-socks-");
for (const n of counts) {
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "magi-bench-socks-" });
  // Two per folder (a folder of only sockets would be covered whole by a walk).
  const listeners: Deno.Listener[] = [];
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `f${Math.floor(i / 2)}`);
    await Deno.mkdir(sub, { recursive: true });
    await Deno.writeTextFile(join(sub, "note"), "x");
    listeners.push(Deno.listen({ transport: "unix", path: join(sub, `s${i}`) }));
  }
  // Made with unix sockets refused (the default: nothing covered) and allowed (each covered).
  const made = [false, true].map((unixSockets) => {
    const wrap = sandboxLauncher(
      { mode: "workspace-write", network: false, denyRead: [], unixSockets },
      { roots: [home], home, hidden: [] },
      "workspace-write",
    );
    wrap("true", []);
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) wrap("true", []);
    return ((performance.now() - t0) / 20).toFixed(2);
  });
  const wrapMs = `${made[0]} ms (unix_sockets true: ${made[1]})`;
  const added = await sandboxAddedMs(home, env, { runs: 5, reps: 10 });
  added.sort((a, b) => a - b);
  console.log(
    `${n} sockets: command made in ${wrapMs}; run 'true' +${
      added[Math.floor(added.length / 2)].toFixed(1)
    } ms (min ${added[0].toFixed(1)}, max ${added.at(-1)!.toFixed(1)})`,
  );
  for (const l of listeners) l.close();
  await Deno.remove(dir, { recursive: true });
}
