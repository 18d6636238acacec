/**
 * The files a hook's line or an MCP server's command names that did not exist when the
 * session started (SPEC S8.3). magi runs hooks and starts MCP servers outside any sandbox; what
 * exists of their files at start stays read-only for every sandboxed call (`runs_later.ts`),
 * but a missing one could be made by a call and then run. So such a file, there now, is refused:
 * the hook is not run, the server not started, one line says why — costing only that hook or
 * server.
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { readLine } from "./shell.ts";
import type { LaterProgram } from "./runs_later.ts";

/** What a program named that was missing when the session started. */
export interface LaterMissing {
  /** Absolute paths named (words with a slash, resolved from the start folder) missing then. */
  paths: string[];
  /** When the session started (ms): a file made after it in another folder is refused too. */
  since: number;
}

/** What a script magi would run looks like: a word ending so. */
const SCRIPT = /\.(js|mjs|cjs|ts|mts|cts|jsx|tsx|py|sh|bash|zsh|fish|rb|pl|php|lua|jar)$/;

/** Interpreters whose first word that is no option is the script they run. */
const INTERPRETERS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "node",
  "python",
  "python3",
  "ruby",
  "perl",
  "php",
  "lua",
  "bun",
]);

/**
 * The words of a program's line or command that name what runs, with a slash (`./hook.sh`,
 * `scripts/lint.sh`, `~/bin/x`): the program word, an interpreter's script (`sh scripts/x`), and
 * any word ending as a script does (`deno run -A ./server.ts`). Data files it names (a log a
 * hook appends to, a server's database) are not: the program itself may make them. A bare name
 * is looked up on PATH, whose folders are kept read-only where a root holds them.
 */
export function pathWords(program: LaterProgram): string[] {
  const commands: string[][] = [];
  if ("argv" in program) commands.push([...program.argv]);
  else {
    try {
      const line = readLine(program.line);
      for (const c of line.commands) commands.push([c.program, ...c.words]);
      for (const l of line.launchers) commands.push([l]);
    } catch {
      commands.push(program.line.split(/\s+/));
    }
  }
  const out = new Set<string>();
  for (const [first, ...rest] of commands) {
    if (!first) continue;
    out.add(first);
    const name = first.split("/").at(-1) ?? "";
    const script = INTERPRETERS.has(name) ? rest.find((w) => !w.startsWith("-")) : undefined;
    if (script) out.add(script);
    for (const w of rest) if (SCRIPT.test(w)) out.add(w);
  }
  return [...out].filter((w) => w.includes("/") && !w.includes("://"));
}

/** The paths a program names, resolved from `cwd` (`~/` against HOME). */
function resolved(program: LaterProgram, cwd: string, home: string | undefined): string[] {
  return pathWords(program).map((w) =>
    w.startsWith("~/") && home ? join(home, w.slice(2)) : isAbsolute(w) ? w : resolve(cwd, w)
  );
}

/** What each program named that was missing when this process first looked. */
const firstSeen = new Map<string, LaterMissing>();

/**
 * Notes, at the session's start, what a program names that is missing: the first note for the
 * same program in this process stands (a runtime built again, a server's connection made
 * again, keep the session's start).
 */
export function laterMissing(program: LaterProgram, home: string | undefined): LaterMissing {
  const key = JSON.stringify([program, home]);
  let noted = firstSeen.get(key);
  if (!noted) {
    noted = {
      paths: resolved(program, program.cwd, home).filter((p) => !exists(p)),
      since: Date.now(),
    };
    firstSeen.set(key, noted);
  }
  return noted;
}

/**
 * Why a program must not run now, as one line's reason, or undefined: a file it names that was
 * missing at the session's start exists now, or (resolved from `cwd`, the folder it runs in
 * now) one made since the session started.
 */
export function plantedSince(
  program: LaterProgram,
  noted: LaterMissing,
  cwd: string,
  home: string | undefined,
): string | undefined {
  const made = noted.paths.find(exists);
  if (made) {
    return `${made} did not exist when the session started (a sandboxed call may have made it)`;
  }
  if (cwd === program.cwd) return undefined;
  for (const p of resolved(program, cwd, home)) {
    try {
      const born = Deno.lstatSync(p).birthtime?.getTime();
      if (born !== undefined && born >= noted.since) {
        return `${p} was made after the session started (a sandboxed call may have made it)`;
      }
    } catch {
      // missing: nothing to run there
    }
  }
  return undefined;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
