/**
 * `grep`: searches files for a regular expression and answers `path:line:text`. Walks
 * folders in name order, honours `.gitignore` files (the search root's, its ancestors' up to
 * the repository root, and every folder's below), skips `.git`, binary files and symlinks
 * met while walking, and stops showing at `limit` matching lines while still counting the
 * rest.
 *
 * @module
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type ignoreFactory from "ignore";
import type { Ignore } from "ignore";
import { Buffer } from "node:buffer";
import type picomatchFn from "picomatch";
import type { Builtin, BuiltinContext, BuiltinResult } from "../lib/registry/builtins.ts";
import { checkPath } from "../lib/policy/roots.ts";
import { describeError, looksBinary, safeText } from "./_files.ts";

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
/** Characters of one line shown (around the match for a matching line). */
const MAX_LINE_CHARS = 240;
/** Paths that could not be searched, listed before the rest are counted. */
const MAX_PROBLEMS = 10;

/** The `grep` builtin. */
export const grep: Builtin = {
  name: "grep",
  description:
    "Search files for a regex (JavaScript syntax): path:line:text; honours .gitignore, skips binary.\n" +
    "grep <pattern> [<path>...] [--glob G] [--context N] [--limit N] [--word] [--ignore-case]",
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string" },
      paths: { type: "array", items: { type: "string" }, description: "Default: ." },
      glob: { type: "string", description: "File filter, e.g. *.ts or src/**/*.{js,ts}" },
      context: { type: "integer", minimum: 0, maximum: 20, description: "Lines around" },
      limit: { type: "integer", minimum: 1, description: `Max lines (${DEFAULT_LIMIT})` },
      word: { type: "boolean", description: "Whole words only" },
      ignore_case: { type: "boolean" },
    },
    required: ["pattern"],
    additionalProperties: false,
    "x-magi": {
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
  },
  run: (args, ctx) => grepBuiltin(args, ctx),
};

/** One `.gitignore` in force: the folder it sits in and its rules. */
interface IgnoreLevel {
  dir: string;
  rules: Ignore;
}

/** The search's state: what is shown, what is counted. */
class Search {
  readonly out: string[] = [];
  shownLines = 0;
  moreLines = 0;
  files = 0;
  readonly problems: string[] = [];
  /** Given paths that could not be searched at all. */
  failedPaths = 0;
  /** Why the search ended early, if it did. */
  stopped = "";

  /**
   * Whether files may be matched as byte strings (latin1, no UTF-8 decoding): the pattern
   * is ASCII, so it matches the same bytes either way. `risky` patterns (wildcards and
   * classes that could match one byte of a multi-byte character) still decode files that
   * hold non-ASCII bytes.
   */
  readonly bytewise: boolean;
  readonly risky: boolean;

  constructor(
    readonly re: RegExp,
    readonly limit: number,
    readonly context: number,
    readonly glob: ((path: string) => boolean) | undefined,
  ) {
    // deno-lint-ignore no-control-regex
    this.bytewise = !/[^\u0000-\u007f]/.test(re.source);
    this.risky = /\.|\[\^|\\[WSDsuxcpk]/.test(re.source);
  }
}

async function grepBuiltin(
  args: Record<string, unknown>,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  await loadPackages();
  const deadline = Date.now() + ctx.timeoutMs;
  const stop = () => ctx.signal.aborted || Date.now() > deadline;
  let source = String(args.pattern);
  if (args.word === true) source = `\\b(?:${source})\\b`;
  let re: RegExp;
  try {
    re = new RegExp(source, args.ignore_case === true ? "gmi" : "gm");
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
      ? walk(search, checked.real, shownBase, ancestorsIgnores(checked.real))
      : [{ path: checked.real, shown: shownBase }];
    if (!(await searchAll(search, candidates, stop))) {
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
function ancestorsIgnores(root: string): IgnoreLevel[] {
  const dirs: string[] = [];
  for (let dir = dirname(root);; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (exists(join(dir, ".git")) || dirname(dir) === dir) break;
  }
  // Only a repository's folders lend their rules; outside one, only the root's own count.
  if (!exists(join(dirs[0], ".git"))) return [];
  const levels = dirs.flatMap((dir) => {
    const rules = loadIgnore(dir);
    return rules ? [{ dir, rules }] : [];
  });
  // A root that is itself ignored (`grep x node_modules`) was asked for by name: search it.
  return ignored(levels, root, true) ? [] : levels;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A folder's ignore rules: its `.gitignore`, and at a repository's top also
 * `.git/info/exclude` (read first, so `.gitignore` overrides it, as in git).
 */
function loadIgnore(dir: string): Ignore | undefined {
  const texts: string[] = [];
  for (const file of [join(dir, ".git", "info", "exclude"), join(dir, ".gitignore")]) {
    try {
      texts.push(Deno.readTextFileSync(file));
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
): Generator<Candidate> {
  function* visit(dir: string, shownDir: string, levels: IgnoreLevel[]): Generator<Candidate> {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      search.problems.push(`Cannot search "${shownDir || "."}": ${describeError(error)}`);
      return;
    }
    const own = entries.some((e) => e.name === ".gitignore" || e.name === ".git")
      ? loadIgnore(dir)
      : undefined;
    const here = own ? [...levels, { dir, rules: own }] : levels;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.isSymlink) continue;
      const path = dir + sep + entry.name;
      const shown = shownDir === "" ? entry.name : shownDir + "/" + entry.name;
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
 * here, see scripts/bench_grep.ts); every {@link BATCH} files the event loop gets a turn
 * and the search stops early (returning false) when the call is cancelled or past its time
 * limit.
 */
async function searchAll(
  search: Search,
  candidates: Iterable<Candidate>,
  stop: () => boolean,
): Promise<boolean> {
  let n = 0;
  for (const { path, shown } of candidates) {
    if (++n % BATCH === 0) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (stop()) return false;
    }
    let bytes: Uint8Array | Error;
    try {
      bytes = Deno.readFileSync(path);
    } catch (error) {
      bytes = error as Error;
    }
    try {
      searchBytes(search, bytes, path, shown);
    } catch (error) {
      // A file too large for one string (512 MiB and more) costs only itself.
      search.problems.push(`Cannot search "${shown || path}": ${(error as Error).message}`);
    }
  }
  return true;
}

const decoder = new TextDecoder();
const NON_ASCII = /[\x80-\xff]/;

function searchBytes(
  search: Search,
  bytes: Uint8Array | Error,
  real: string,
  shown: string,
): void {
  if (bytes instanceof Error) {
    const error = bytes;
    // A file that vanished since the folder was listed is no problem of the search.
    if (!(error instanceof Deno.errors.NotFound)) {
      search.problems.push(`Cannot search "${shown || real}": ${describeError(error)}`);
    }
    return;
  }
  if (bytes.length === 0 || looksBinary(bytes)) return;
  let text: string;
  let bytewise = false;
  if (search.bytewise) {
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
    bytewise = !search.risky || !NON_ASCII.test(text);
    if (!bytewise) text = decoder.decode(bytes);
  } else {
    text = decoder.decode(bytes);
  }
  const re = search.re;
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null || (m.index === text.length && text.endsWith("\n"))) return;
  search.files++;
  const name = shown || real;
  let line = 1;
  let counted = 0; // offset up to which newlines are counted into `line`
  let printed = 0; // last line number printed for this file
  let prevEnd = -1; // end offset of the previous matching line (for after-context)
  let prevLine = 0;
  const C = search.context;
  const emit = (n: number, start: number, end: number, sepChar: string, col = -1) => {
    search.out.push(`${name}${sepChar}${n}${sepChar}${clip(text, start, end, col, bytewise)}`);
    printed = n;
  };
  const flushAfter = (upTo: number) => {
    // After-context of the previous match, up to (not including) line `upTo`.
    let at = prevEnd;
    for (let n = prevLine + 1; n <= prevLine + C && n < upTo && at < text.length; n++) {
      const end = lineEnd(text, at + 1);
      emit(n, at + 1, end, "-");
      at = end;
    }
  };
  while (m !== null) {
    // An empty match after the final newline is no line of the file (`^$`, `x*`).
    if (m.index === text.length && text.endsWith("\n")) break;
    if (search.shownLines >= search.limit) {
      // Past the limit only the count matters: no line numbers, no text.
      const end = lineEnd(text, m.index + (m[0].length > 0 ? m[0].length - 1 : 0));
      search.moreLines++;
      if (end >= text.length) break;
      re.lastIndex = end + 1;
      m = re.exec(text);
      continue;
    }
    const start = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
    const end = lineEnd(text, m.index + (m[0].length > 0 ? m[0].length - 1 : 0));
    line += countNewlines(text, counted, start);
    counted = start;
    {
      if (C > 0) {
        if (prevEnd >= 0) flushAfter(line);
        if (search.out.length > 0 && (prevEnd < 0 || line - C > printed + 1)) {
          search.out.push("--");
        }
        const before: [number, number][] = [];
        let at = start;
        for (let n = line - 1; n >= line - C && n > printed && at > 0; n--) {
          const s = at < 2 ? 0 : text.lastIndexOf("\n", at - 2) + 1;
          before.unshift([s, at - 1]);
          at = s;
        }
        before.forEach(([s, e], i) => emit(line - before.length + i, s, e, "-"));
      }
      emit(line, start, end, ":", m.index - start);
      search.shownLines++;
      prevEnd = end;
      prevLine = line;
    }
    // One result per line: go on after this line's end.
    line += countNewlines(text, start, end + 1 > text.length ? text.length : end + 1);
    counted = Math.min(end + 1, text.length);
    if (end >= text.length) break;
    re.lastIndex = end + 1;
    m = re.exec(text);
  }
  if (C > 0 && prevEnd >= 0) flushAfter(Infinity);
}

function lineEnd(text: string, from: number): number {
  const i = text.indexOf("\n", from);
  return i === -1 ? text.length : i;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** One line for output: control characters replaced, a CR dropped, long lines cut. */
function clip(text: string, start: number, end: number, col: number, bytewise: boolean): string {
  if (end > start && text.charCodeAt(end - 1) === 13) end--;
  const length = end - start;
  let from = start;
  let to = end;
  if (length > MAX_LINE_CHARS) {
    from = col > MAX_LINE_CHARS / 3 ? start + col - Math.floor(MAX_LINE_CHARS / 3) : start;
    to = Math.min(end, from + MAX_LINE_CHARS);
  }
  if (bytewise) {
    // Whole UTF-8 characters only: move the cuts off continuation bytes.
    while (from > start && (text.charCodeAt(from) & 0xc0) === 0x80) from--;
    while (to < end && (text.charCodeAt(to) & 0xc0) === 0x80) to++;
  }
  let slice = text.slice(from, to);
  if (bytewise) slice = Buffer.from(slice, "latin1").toString("utf8");
  slice = safeText(slice).replaceAll("\n", "\\n");
  if (from === start && to === end) return slice;
  return (from > start ? "…" : "") + slice +
    `… [${bytewise ? "line of " : ""}${length} ${bytewise ? "bytes" : "characters"}]`;
}
