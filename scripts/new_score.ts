/**
 * Scores `magi new` over the recorded set (`tests/testdata/new/recorded/`), read through
 * stand-in programs so nothing installed matters: `deno run -A scripts/new_score.ts [--json]`.
 *
 * - everyday: of the flags the set lists as everyday, the share a default declaration types;
 * - recall: with the budget lifted, the share of the options the manual page (or, without
 *   one, the help) lists that are typed, as found by a simple independent reading of entry
 *   lines (an indented line starting with option names, its text on the lines below);
 * - values: of those found, the share whose "takes a value" agrees with that reading;
 * - bytes: the largest default declaration.
 *
 * @module
 */
import { join } from "node:path";
import { makeTool } from "../lib/cli/new.ts";
import { RECORDED } from "../tests/new/recorded_set.ts";
import { RECORDED_DIR, recordedMeta, recordedNames, writeStandIns } from "../tests/new/recorded.ts";

/** Option entries by an independent reading: `{names, value}` per entry line. */
function truthOf(name: string): { names: string[]; value: boolean }[] {
  const meta = recordedMeta(name);
  const file = meta.man?.file ?? meta.runs.find((r) => r.args.includes("all"))?.file ??
    meta.runs[0].file;
  const lines = Deno.readTextFileSync(join(RECORDED_DIR, name, file)).split("\n");
  const out: { names: string[]; value: boolean }[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const m =
      /^( {2,8})(?:[○·•] +)?(-{1,2}[A-Za-z0-9][\w-]*(?:(?:, | ?\/ ?)-{1,2}[A-Za-z0-9][\w-]*)*)(.*)$/
        .exec(lines[i]);
    if (!m) continue;
    const next = lines.slice(i + 1).find((l) => l.trim() !== "") ?? "";
    const gap = /^(\S*)( {2,}|\t)\S/.exec(m[3]);
    const below = next.length - next.trimStart().length > m[1].length;
    if (!gap && !below) continue;
    if (!gap && /^\s+\S+\s+\S+\s+\S+/.test(m[3])) continue; // prose
    const names = m[2].split(/, | ?\/ ?/);
    if (names.some((n) => seen.has(n)) || /^--?(help|version|usage)$/.test(names[0])) continue;
    names.forEach((n) => seen.add(n));
    const rest = (gap ? gap[1] : m[3]).replace(/:$/, "").trim();
    out.push({ names, value: rest !== "" && rest !== ":" });
  }
  return out;
}

const json = Deno.args.includes("--json");
const dir = await Deno.makeTempDir({ prefix: "magi-new-score-" });
try {
  const names = recordedNames();
  const bin = await writeStandIns(join(dir, "bin"), names);
  const env = {
    ...Deno.env.toObject(),
    PATH: `${bin}:/usr/bin:/bin`,
    XDG_CACHE_HOME: join(dir, "cache"),
  };
  const rows = [];
  let everyHit = 0, everyAll = 0, recHit = 0, recAll = 0, valHit = 0, valAll = 0, maxBytes = 0;
  for (const name of names) {
    const words = RECORDED[name].from.split(" ");
    const base = { name, words, toolsDir: join(dir, "tools"), cwd: dir, env, generic: false };
    const def = await makeTool({ ...base, force: true, dryRun: true });
    const lifted = await makeTool({ ...base, force: true, dryRun: true, maxParams: 100000 });
    const typedNames = (r: typeof def) => {
      const kept = new Set(r.capture.best?.model.options ?? []);
      for (const o of r.generated?.left ?? []) kept.delete(o);
      return r.generated ? [...kept] : [];
    };
    const typed = new Set(typedNames(def).flatMap((o) => o.names));
    const everyday = RECORDED[name].everyday;
    const missed = everyday.filter((f) => !typed.has(f));
    const all = typedNames(lifted);
    const byName = new Map(all.flatMap((o) => o.names.map((n) => [n, o] as const)));
    const truth = truthOf(name);
    const found = truth.filter((t) => t.names.some((n) => byName.has(n)));
    const agree = found.filter((t) => {
      const o = t.names.map((n) => byName.get(n)).find((x) => x)!;
      return (o.value !== undefined) === t.value;
    });
    const tool = join(dir, "tools", name);
    const description = `${def.plan.summary}\n${def.plan.usage}`;
    const bytes = new TextEncoder().encode(
      JSON.stringify({
        name,
        description,
        parameters: def.generated ? def.generated.schema : {},
      }).replace(/,"x-magi":\{.*\}\}$/, "}"),
    ).length;
    everyHit += everyday.length - missed.length;
    everyAll += everyday.length;
    recHit += found.length;
    recAll += truth.length;
    valHit += agree.length;
    valAll += found.length;
    maxBytes = Math.max(maxBytes, bytes);
    rows.push({
      name,
      everyday: `${everyday.length - missed.length}/${everyday.length}`,
      missed,
      recall: truth.length ? +(found.length / truth.length).toFixed(2) : 1,
      notFound: truth.filter((t) => !found.includes(t)).map((t) => t.names[0]).slice(0, 8),
      values: found.length ? +(agree.length / found.length).toFixed(2) : 1,
      valueMismatch: found.filter((t) => !agree.includes(t)).map((t) => t.names[0]).slice(0, 8),
      bytes,
      tool,
    });
  }
  const totals = {
    everyday: +(everyHit / everyAll).toFixed(3),
    recall: +(recHit / recAll).toFixed(3),
    values: +(valHit / valAll).toFixed(3),
    maxDeclarationBytes: maxBytes,
  };
  if (json) console.log(JSON.stringify({ rows, totals }, null, 2));
  else {
    for (const r of rows) {
      console.log(
        `${r.name.padEnd(18)} everyday ${r.everyday.padEnd(6)} recall ${
          String(r.recall).padEnd(5)
        } values ${String(r.values).padEnd(5)} ${r.bytes} B` +
          (r.missed.length ? `  missed ${r.missed.join(" ")}` : "") +
          (r.notFound.length ? `  not found ${r.notFound.join(" ")}` : "") +
          (r.valueMismatch.length ? `  value? ${r.valueMismatch.join(" ")}` : ""),
      );
    }
    console.log(
      `everyday ${totals.everyday}  recall ${totals.recall}  values ${totals.values}  ` +
        `largest declaration ${totals.maxDeclarationBytes} B`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
