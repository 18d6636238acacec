/**
 * Stand-ins for recorded programs: a folder of small sh scripts named like the programs,
 * which print what the real ones printed for each recorded help invocation (and `man`, which
 * prints the recorded page), so `magi new` reads the recorded texts through real processes.
 * Any other call prints `CALLED:` and its arguments, one per line, so a test sees the argv a
 * tool built.
 *
 * @module
 */
import { join } from "node:path";
import { findProgram } from "../../lib/scaffold/capture.ts";
import { shQuote } from "../../lib/scaffold/scaffold.ts";
import { TESTDATA } from "../helpers.ts";
import { RECORDED, type RecordedMeta } from "./recorded_set.ts";

export const RECORDED_DIR = join(TESTDATA, "new", "recorded");

/** The recorded names, sorted. */
export function recordedNames(): string[] {
  return Object.keys(RECORDED).filter((n) => {
    try {
      return Deno.statSync(join(RECORDED_DIR, n, "meta.json")).isFile;
    } catch {
      return false;
    }
  }).sort();
}

export function recordedMeta(name: string): RecordedMeta {
  return JSON.parse(Deno.readTextFileSync(join(RECORDED_DIR, name, "meta.json")));
}

/**
 * Writes stand-ins for the named recorded programs into `bin` (one script per program; a
 * program recorded under several names, such as `docker ps` and `docker context ls`, answers
 * for all of them) and a `man` that knows their pages.
 *
 * @param opts `passThrough`: a call that is no recorded help invocation runs the real program
 *   of that name (found on this machine's PATH), so a tool made from recorded texts still
 *   reaches the real program
 * @returns the folder to put first on PATH
 */
export async function writeStandIns(
  bin: string,
  names: string[],
  opts: { passThrough?: boolean } = {},
): Promise<string> {
  await Deno.mkdir(bin, { recursive: true });
  const byProgram = new Map<string, string[]>();
  const pages: string[] = [];
  for (const name of names) {
    const meta = recordedMeta(name);
    const program = meta.from.split(" ")[0];
    const cases = byProgram.get(program) ?? [];
    for (const run of meta.runs) {
      const file = join(RECORDED_DIR, name, run.file);
      const to = run.stream === "stderr" ? " >&2" : "";
      cases.push(
        `  ${shQuote(run.args.join(" "))}) cat ${shQuote(file)}${to}; exit ${run.code} ;;`,
      );
    }
    byProgram.set(program, cases);
    if (meta.man) {
      const file = join(RECORDED_DIR, name, meta.man.file);
      pages.push(`  ${shQuote(meta.man.page)}) cat ${shQuote(file)}; exit 0 ;;`);
    }
  }
  for (const [program, cases] of byProgram) {
    const real = opts.passThrough
      ? findProgram(
        program,
        bin,
        (Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== bin).join(":"),
      )
      : undefined;
    const otherwise = real ? `exec ${shQuote(real)} "$@"` : `echo CALLED:\nprintf '%s\\n' "$@"`;
    await Deno.writeTextFile(
      join(bin, program),
      `#!/bin/sh\ncase "$*" in\n${cases.join("\n")}\nesac\n${otherwise}\n`,
      { mode: 0o755 },
    );
  }
  await Deno.writeTextFile(
    join(bin, "man"),
    `#!/bin/sh\nfor page; do :; done\ncase "$page" in\n${pages.join("\n")}\nesac\n` +
      `echo "No manual entry for $page" >&2\nexit 16\n`,
    { mode: 0o755 },
  );
  return bin;
}
