/**
 * What looking for planted repositories (`planted_repos.ts`) costs a call that may write the
 * roots: the look before it and the look after, over a tree of 5,000 files (500 folders, three
 * levels, 10 files each; 5 repositories among them), cold (first look) and warm (listings
 * cached: one `stat` per folder), in milliseconds.
 *
 * `deno run -A scripts/bench_planted.ts [--files N]`
 *
 * @module
 */
import { join } from "node:path";
import { disarmPlanted, lookBefore } from "../lib/confinement/planted_repos.ts";

const at = Deno.args.indexOf("--files");
const files = at >= 0 ? Number(Deno.args[at + 1]) : 5000;
const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-bench-planted-" }));
try {
  const perFolder = 10;
  const folders = Math.ceil(files / perFolder);
  // Three levels: a × b × c folders.
  const side = Math.ceil(Math.cbrt(folders));
  let made = 0;
  for (let a = 0; a < side && made < folders; a++) {
    for (let b = 0; b < side && made < folders; b++) {
      for (let c = 0; c < side && made < folders; c++, made++) {
        const dir = join(root, `a${a}`, `b${b}`, `c${c}`);
        Deno.mkdirSync(dir, { recursive: true });
        for (let f = 0; f < perFolder; f++) Deno.writeTextFileSync(join(dir, `f${f}.txt`), "x");
      }
    }
  }
  for (let r = 0; r < 5; r++) {
    const repo = join(root, `a${r % side}`, "b0", "c0");
    const g = new Deno.Command("git", { args: ["init", "-q", repo] }).outputSync();
    if (!g.success) throw new Error("git init failed");
  }
  // Settled listings: a folder changed within 100 ms is not cached.
  await new Promise((r) => setTimeout(r, 200));
  const time = () => {
    const t0 = performance.now();
    const before = lookBefore([root]);
    const t1 = performance.now();
    const look = disarmPlanted([root], Date.now(), before);
    const t2 = performance.now();
    return { before: t1 - t0, after: t2 - t1, folders: look.folders };
  };
  const cold = time();
  const warm: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = time();
    warm.push(t.before + t.after);
  }
  warm.sort((x, y) => x - y);
  console.log(
    `${files} files, ${cold.folders} folders: cold ${(cold.before + cold.after).toFixed(1)} ms ` +
      `(before ${cold.before.toFixed(1)}, after ${cold.after.toFixed(1)}); warm median ` +
      `${warm[10].toFixed(1)} ms, min ${warm[0].toFixed(1)}, max ${warm[19].toFixed(1)} ` +
      `(before + after, per call)`,
  );
} finally {
  await Deno.remove(root, { recursive: true });
}
