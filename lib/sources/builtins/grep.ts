/**
 * `grep`: searches files for a regular expression and answers `path:line:text`. Walks
 * folders in name order, honours `.gitignore` files (the search root's, its ancestors' up to
 * the repository root, and every folder's below), skips `.git`, binary files and symlinks
 * met while walking, and stops showing at `limit` matching lines while still counting the
 * rest. Each file is read in chunks (see `_grep_file.ts`), so memory stays bounded.
 *
 * @module
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type ignoreFactory from "ignore";
import type { Ignore } from "ignore";
import type picomatchFn from "picomatch";
import { type Builtin, type BuiltinContext, type BuiltinResult, closedObject } from "./builtin.ts";
import { checkPath, isInside } from "../../policy/roots.ts";
import { describeError, hiddenRefusal } from "./_files.ts";
import { type HiddenSet, hiddenWhy } from "../../confinement/sandbox_paths.ts";
import { readChecked } from "./_race_free.ts";
import { pathExists } from "../../core/exists.ts";
import { FileScan, MAX_LINE_BYTES, Search } from "./_grep_file.ts";

// Loaded on the first search, not at start-up — by `import()`, not `require`: a body Worker
// may not read `node_modules`, but Deno's module loader can.
let ignore: typeof ignoreFactory;
let picomatch: typeof picomatchFn;
async function loadPackages(): Promise<void> {
  ignore ??= (await import("ignore")).default;
  picomatch ??= (await import("picomatch")).default;
}

/** Matching lines shown when the call gives no limit. */
const DEFAULT_LIMIT = 100;
/** Paths that could not be searched, listed before the rest are counted. */
const MAX_PROBLEMS = 10;

/** The `grep` builtin. */
export const grep: Builtin = {
  name: "grep",
  description:
    "Search files for a regex (JavaScript syntax): path:line:text; honours .gitignore, skips binary.\n" +
    "grep <pattern> [<path>...] [--glob G] [--context N] [--limit N] [--word] [--ignore-case]",
  parameters: closedObject(
    {
      pattern: { type: "string" },
      paths: { type: "array", items: { type: "string" }, description: "Default: ." },
      glob: { type: "string", description: "File filter, e.g. *.ts or src/**/*.{js,ts}" },
      context: { type: "integer", minimum: 0, maximum: 20, description: "Lines around" },
      limit: { type: "integer", minimum: 1, description: `Max lines (${DEFAULT_LIMIT})` },
      word: { type: "boolean", description: "Whole words only" },
      ignore_case: { type: "boolean" },
    },
    ["pattern"],
    {
      argv: [
        { field: "pattern" },
        { field: "paths" },
        { flag: "--glob", field: "glob" },
        { flag: "--context", field: "context" },
        { flag: "--limit", field: "limit" },
        { flag: "--word", when_field: "word" },
        { flag: "--ignore-case", when_field: "ignore_case" },
      ],
      stdin: { mode: "none" },
    },
  ),
  run: (args, ctx) => grepBuiltin(args, ctx),
};

/** One `.gitignore` in force: the folder it sits in and its rules. */
interface IgnoreLevel {
  dir: string;
  rules: Ignore;
}

/**
 * A pattern's `^` and `$` (outside classes, not escaped) as line anchors that only `\n` ends:
 * `^` → `(?<![^\n])`, `$` → `(?![^\n])`. JavaScript's multiline mode also ends a line at
 * `\r`, so in a CRLF file `^$` would match every line and `x$` the `x` before `\r`; GNU grep
 * does neither.
 */
export function lineAnchors(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      out += c + (pattern[i + 1] ?? "");
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
      // A `^` right after `[` negates the class.
      if (pattern[i + 1] === "^") {
        out += "^";
        i++;
      }
    } else if (c === "^") out += "(?<![^\n])";
    else if (c === "$") out += "(?![^\n])";
    else out += c;
  }
  return out;
}

async function grepBuiltin(
  args: Record<string, unknown>,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  await loadPackages();
  const deadline = Date.now() + ctx.timeoutMs;
  const stop = () => ctx.signal.aborted || Date.now() > deadline;
  let source = lineAnchors(String(args.pattern));
  if (args.word === true) source = `\\b(?:${source})\\b`;
  let re: RegExp;
  try {
    re = new RegExp(source, args.ignore_case === true ? "gi" : "g");
  } catch (error) {
    return {
      said: `Invalid pattern "${args.pattern}": ${(error as Error).message}\n`,
      isError: true,
    };
  }
  const glob = typeof args.glob === "string" && args.glob !== ""
    ? picomatch(args.glob, { basename: true, dot: true })
    : undefined;
  const search = new Search(
    re,
    typeof args.limit === "number" ? args.limit : DEFAULT_LIMIT,
    typeof args.context === "number" ? args.context : 0,
    glob,
  );
  const paths = Array.isArray(args.paths) && args.paths.length > 0 ? args.paths.map(String) : ["."];
  for (const path of paths) {
    const checked = checkPath(path, ctx.cwd, ctx.roots, "search");
    if (typeof checked === "string") {
      search.problems.push(checked);
      search.failedPaths++;
      continue;
    }
    const hidden = hiddenRefusal(path, checked.real, ctx, "search");
    if (hidden) {
      search.problems.push(hidden);
      search.failedPaths++;
      continue;
    }
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(checked.real);
    } catch (error) {
      search.problems.push(`Cannot search "${path}": ${describeError(error)}`);
      search.failedPaths++;
      continue;
    }
    const shownBase = displayBase(path, checked.real, ctx.cwd);
    const candidates = info.isDirectory
      ? walk(
        search,
        checked.real,
        shownBase,
        ancestorsIgnores(checked.real, ctx.roots),
        ctx.roots,
        below(ctx.hidden, checked.real),
      )
      : [{ path: checked.real, shown: shownBase }];
    if (!(await searchAll(search, candidates, stop, ctx.roots))) {
      search.stopped = ctx.signal.aborted ? "cancelled" : "past the time limit";
      break;
    }
  }
  return result(search, paths.length);
}

/** How paths under a search root are shown: relative to the cwd when inside it. */
function displayBase(given: string, real: string, cwd: string): string {
  if (!isAbsolute(given)) return given === "." ? "" : given.replace(/\/+$/, "");
  const rel = relative(cwd, real);
  return rel === "" ? "" : rel.startsWith("..") || isAbsolute(rel) ? real : rel;
}

function result(search: Search, pathCount: number): BuiltinResult {
  const problems = search.problems.length > MAX_PROBLEMS
    ? [
      ...search.problems.slice(0, MAX_PROBLEMS),
      `(${search.problems.length - MAX_PROBLEMS} more paths could not be searched)`,
    ]
    : search.problems;
  const lines = [...problems, ...search.out];
  if (search.shownLines === 0 && search.failedPaths < pathCount) lines.push("(no matches)");
  if (search.cutLines > 0) {
    const cap = `${MAX_LINE_BYTES} bytes`;
    lines.push(
      search.cutLines === 1
        ? `(1 line was longer than ${cap}; only its first ${cap} were searched)`
        : `(${search.cutLines} lines were longer than ${cap}; only the first ${cap} of each were searched)`,
    );
  }
  if (search.stopped) lines.push(`(the search stopped early: ${search.stopped})`);
  if (search.moreLines > 0) {
    lines.push(
      `(${search.moreLines} more matching lines not shown; narrow the search or raise limit)`,
    );
  }
  const isError = search.failedPaths === pathCount;
  return { said: lines.join("\n") + "\n", isError };
}

/** The `.gitignore` files above a search root, from the repository's root down. */
function ancestorsIgnores(root: string, roots: readonly string[]): IgnoreLevel[] {
  const dirs: string[] = [];
  for (let dir = dirname(root);; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (pathExists(join(dir, ".git")) || dirname(dir) === dir) break;
  }
  // Only a repository's folders lend their rules; outside one, only the root's own count.
  if (!pathExists(join(dirs[0], ".git"))) return [];
  const levels = dirs.flatMap((dir) => {
    const rules = loadIgnore(dir, roots);
    return rules ? [{ dir, rules }] : [];
  });
  // A root that is itself ignored (`grep x node_modules`) was asked for by name: search it.
  return ignored(levels, root, true) ? [] : levels;
}

/**
 * A folder's ignore rules: its `.gitignore`, and at a repository's top also
 * `.git/info/exclude` (read first, so `.gitignore` overrides it, as in git).
 */
function loadIgnore(dir: string, roots: readonly string[]): Ignore | undefined {
  const texts: string[] = [];
  for (const file of [join(dir, ".git", "info", "exclude"), join(dir, ".gitignore")]) {
    try {
      // Above the search root (outside the roots, even) the plain read is what it was;
      // inside the roots a swapped folder must not lend another folder's rules.
      const inside = roots.some((root) => isInside(file, root));
      const bytes = inside ? readChecked(file, roots)?.bytes : Deno.readFileSync(file);
      if (bytes) texts.push(new TextDecoder().decode(bytes));
    } catch {
      // No such file here.
    }
  }
  return texts.length > 0 ? ignore().add(texts.join("\n")) : undefined;
}

function ignored(levels: readonly IgnoreLevel[], path: string, isDir: boolean): boolean {
  let state = false;
  for (const level of levels) {
    const rel = relative(level.dir, path);
    if (rel === "" || rel.startsWith("..")) continue;
    const test = level.rules.test(isDir ? rel + "/" : rel);
    if (test.ignored) state = true;
    else if (test.unignored) state = false;
  }
  return state;
}

/** A file to search: its real path and how the output names it. */
/** The part of a hidden set below `dir` (what a walk of it can meet). */
function below(set: HiddenSet | undefined, dir: string): HiddenSet | undefined {
  if (!set) return undefined;
  const entries = set.entries.filter((h) => isInside(h.path, dir));
  return { ...set, entries };
}

interface Candidate {
  path: string;
  shown: string;
}

/** The files under a folder, in name order, that the ignore rules and the glob let through. */
function* walk(
  search: Search,
  root: string,
  shownRoot: string,
  levels: IgnoreLevel[],
  roots: readonly string[],
  hidden?: HiddenSet,
): Generator<Candidate> {
  function* visit(dir: string, shownDir: string, levels: IgnoreLevel[]): Generator<Candidate> {
    let entries: Deno.DirEntry[];
    try {
      // A folder swapped for a symlink during the walk can list another folder's names:
      // harmless, as each file is proved inside the roots before it shows (FileScan), and
      // a name alone is never shown.
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      search.problems.push(`Cannot search "${shownDir || "."}": ${describeError(error)}`);
      return;
    }
    const own = entries.some((e) => e.name === ".gitignore" || e.name === ".git")
      ? loadIgnore(dir, roots)
      : undefined;
    const here = own ? [...levels, { dir, rules: own }] : levels;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.isSymlink) continue;
      const path = dir + sep + entry.name;
      const shown = shownDir === "" ? entry.name : shownDir + "/" + entry.name;
      // What the sandbox hides is skipped, as a sandboxed grep would find it empty.
      if (hiddenWhy(path, hidden)) continue;
      if (entry.isDirectory) {
        if (entry.name === ".git" || ignored(here, path, true)) continue;
        yield* visit(path, shown, here);
      } else if (entry.isFile) {
        if (ignored(here, path, false)) continue;
        if (search.glob && !search.glob(relative(root, path))) continue;
        yield { path, shown };
      }
    }
  }
  yield* visit(root, shownRoot, levels);
}

/** Files searched between two looks at the clock and the cancel signal. */
const BATCH = 256;

/**
 * Searches candidates in order. Reads are synchronous (measured faster than async reads
 * here, see scripts/bench_grep.ts) and in chunks (see {@link FileScan}); every {@link BATCH}
 * files, and within a large file every 16 MiB, the event loop gets a turn
 * and the search stops early (returning false) when the call is cancelled or past its time
 * limit.
 */
async function searchAll(
  search: Search,
  candidates: Iterable<Candidate>,
  stop: () => boolean,
  roots: readonly string[],
): Promise<boolean> {
  const turn = async () => {
    await new Promise((resolve) => setTimeout(resolve, 0));
    return !stop();
  };
  let n = 0;
  for (const { path, shown } of candidates) {
    if (++n % BATCH === 0 && !(await turn())) return false;
    const scan = new FileScan(search, path, shown, roots);
    try {
      while (scan.step()) if (!(await turn())) return false;
    } finally {
      scan.close();
    }
  }
  return true;
}
