/**
 * Capturing a program's help text for `magi new`: `PROGRAM [SUB…] --help`, then `-h`, then
 * `PROGRAM help [SUB…]` (for subcommands), each under discovery's time limit, keeping the text
 * that reads best.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { isAbsolute, join, resolve } from "node:path";
import { spawnProcess } from "../exec/spawn.ts";
import { HELP_MAX_BYTES, HELP_TIMEOUT_MS } from "../sources/tools_dir.ts";
import { basename } from "node:path";
import { combine } from "./combine.ts";
import { type HelpModel, parseHelp } from "./help_parse.ts";
import { manPageName, readManPage } from "./man.ts";

/**
 * Most bytes of help text read, per stream. Discovery reads 4000 bytes because it needs two
 * lines; a whole option list is longer (`ls --help` is 7.8 KB, `node --help` 21 KB).
 */
export const NEW_HELP_MAX_BYTES = HELP_MAX_BYTES * 16;

/** One help invocation that printed text. */
export interface CapturedHelp {
  /** The arguments after the program: `["status", "-h"]`. */
  args: string[];
  text: string;
  /** Exit status, null when ended by a signal (as when cut at the byte limit). */
  code: number | null;
  /** The text came from stderr (stdout was empty). */
  fromStderr: boolean;
  /** The text was cut at {@link NEW_HELP_MAX_BYTES}. */
  capped: boolean;
  /** What all the texts read say together (see `combine.ts`). */
  model: HelpModel;
  /** The fuller help read besides (`["--help", "all"]`), when the text pointed to one. */
  more?: string[];
  /** The manual page read besides, when one is installed: `git-commit`. */
  man?: string;
  /** Flags the first help page shows when a fuller one was read (a sign of use). */
  featured?: Set<string>;
  /** The manual page's SYNOPSIS and EXAMPLES, where options are shown in use. */
  usageText?: string;
  /** The manual page's option sections, where options refer to each other. */
  references?: string;
}

/** What the attempts gave. */
export interface CaptureResult {
  /** The attempt whose text reads best, if any printed text. */
  best?: CapturedHelp;
  /** One line per attempt that failed: `"git --help" did not finish within 5 s`. */
  problems: string[];
}

/**
 * Finds a program the way a shell would: a path with a slash as given (against `cwd`),
 * else the first executable file of that name on `PATH`.
 *
 * @returns the absolute path, or undefined when there is none
 */
export function findProgram(word: string, cwd: string, path: string): string | undefined {
  const candidates = word.includes("/")
    ? [isAbsolute(word) ? word : resolve(cwd, word)]
    : path.split(":").filter((d) => d !== "").map((d) => join(d, word));
  for (const c of candidates) {
    try {
      const info = Deno.statSync(c);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return c;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * Runs the help invocations in turn and keeps the best text. Stops at the first text with a
 * usage line and something typed, and after a timeout (a program that hangs once will hang
 * again).
 *
 * @param program the program's absolute path
 * @param words the command line as given: `["git", "status"]` (the first word is the program)
 */
export async function captureHelp(
  program: string,
  words: readonly string[],
  env: Record<string, string>,
  cwd: string,
): Promise<CaptureResult> {
  const sub = words.slice(1);
  // `PROGRAM help` only where a help command is likely: with subcommand words (`go help build`),
  // or when a text said so. Elsewhere "help" could be taken as a file name.
  const queue = [[...sub, "--help"], [...sub, "-h"]];
  let helpQueued = false;
  const queueHelp = () => {
    if (!helpQueued) queue.push(["help", ...sub]);
    helpQueued = true;
  };
  if (sub.length > 0) queueHelp();
  const helpEnv = {
    ...env,
    PAGER: "cat",
    MANPAGER: "cat",
    GIT_PAGER: "cat",
    NO_COLOR: "1",
    TERM: "dumb",
    COLUMNS: "100",
  };
  const result: CaptureResult = { problems: [] };
  let bestScore = -1;
  for (let args = queue.shift(); args !== undefined; args = queue.shift()) {
    const shown = [words[0], ...args].join(" ");
    const got = await runHelp(program, args, helpEnv, cwd);
    if (typeof got === "string") {
      result.problems.push(got.replace("%s", shown));
      if (!got.startsWith("%s printed nothing")) break;
      continue;
    }
    const { text } = got;
    if (/\bhelp\s+[<[]?(command|cmd|topic|subcommand)\b/i.test(text)) queueHelp();
    const model = parseHelp(text, words);
    const typed = model.options.length + (model.positionals?.length ?? 0);
    // A manual page (`git status --help`) is a last resort: its prose defeats the parser.
    const man = model.style === "man";
    const score = (model.usage ? 1000 : 0) - (man ? 500 : 0) + typed + (got.code === 0 ? 1 : 0);
    if (score > bestScore) {
      bestScore = score;
      result.best = { args, ...got, model };
    }
    if (model.usage && !man && (typed > 0 || model.positionals !== null)) break;
  }
  await readMore(result, program, words, helpEnv, cwd);
  return result;
}

/** At most this many non-empty lines make a failed help text look like an error message. */
const ERROR_MAX_LINES = 3;

/**
 * The text of a help capture that is an error message rather than help: the program exited
 * with a non-zero status and printed a short text (at most 3 non-empty lines) with no usage
 * line and no option, as `git nosuchsub --help` does ("git: 'nosuchsub' is not a git command").
 *
 * @returns the text's first non-empty line, or undefined when the capture reads as help
 */
export function errorInsteadOfHelp(help: CapturedHelp): string | undefined {
  if (help.code === 0 || help.code === null) return undefined;
  if (help.model.usage !== undefined || help.model.options.length > 0) return undefined;
  const lines = help.text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.length <= ERROR_MAX_LINES ? lines[0] : undefined;
}

/**
 * Runs one help invocation.
 *
 * @returns what it printed, or a problem line with `%s` for the command shown
 */
async function runHelp(
  program: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  maxBytes = NEW_HELP_MAX_BYTES,
): Promise<Omit<CapturedHelp, "model" | "args"> | string> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  let errBytes = 0;
  const spawned = await spawnProcess({
    program,
    args,
    cwd,
    env,
    timeoutMs: HELP_TIMEOUT_MS,
    maxStdoutBytes: maxBytes,
    graceMs: 500,
    onStdout: (chunk) => void out.push(chunk.slice()),
    onStderr: (chunk) => {
      if (errBytes >= maxBytes) return;
      const kept = chunk.subarray(0, maxBytes - errBytes);
      errBytes += kept.length;
      err.push(kept.slice());
    },
  });
  if (spawned.startError) return spawned.startError;
  if (spawned.timedOut) return `"%s" did not finish within ${HELP_TIMEOUT_MS / 1000} s`;
  const decoder = new TextDecoder();
  let text = decoder.decode(Buffer.concat(out));
  let fromStderr = false;
  if (text.trim() === "") {
    text = decoder.decode(Buffer.concat(err));
    fromStderr = true;
  }
  if (text.trim() === "") {
    return `"%s" printed nothing (exit status ${spawned.code ?? spawned.signal})`;
  }
  return {
    text,
    code: spawned.code,
    fromStderr,
    capped: spawned.capped || errBytes >= maxBytes,
  };
}

/** Most bytes of a manual page read (curl's is 260 KB as text). */
export const MAN_MAX_BYTES = 1024 * 1024;

/** Where a help text says there is more: `--help all`, `--help full`. */
const MORE = /(--help[ =](all|full))\b/;

/**
 * Reads what the chosen help points to (`--help all`) and the manual page, and combines them
 * into the capture's model. A page that is not installed, or `man` that is missing, costs
 * nothing. Takes what {@link captureHelp} takes, after the result.
 */
async function readMore(
  result: CaptureResult,
  ...[program, words, env, cwd]: Parameters<typeof captureHelp>
): Promise<void> {
  const sub = words.slice(1);
  const best = result.best;
  let full: HelpModel | undefined;
  const more = best && MORE.exec(best.text);
  if (best && more) {
    const args = [...sub, ...more[1].split(/[ =]/)];
    const got = await runHelp(program, args, env, cwd);
    if (typeof got !== "string") {
      full = parseHelp(got.text, words);
      if (full.options.length > best.model.options.length) best.more = args;
      else full = undefined;
    }
  }
  const page = manPageName(basename(program), sub);
  const man = await readMan(page, env, cwd);
  if (!best && !man) return;
  const combined = combine(best?.model, full, man, words);
  if (best) {
    best.model = combined.model;
    best.featured = combined.featured;
    best.usageText = combined.usageText;
    best.references = combined.references;
    if (man) best.man = page;
    return;
  }
  // No help at all (coreutils' `test --help` prints nothing): the page serves alone.
  result.best = {
    args: ["--help"],
    text: "",
    code: null,
    fromStderr: false,
    capped: false,
    model: combined.model,
    man: page,
    featured: combined.featured,
    usageText: combined.usageText,
    references: combined.references,
  };
}

/** Runs `man` for a page, as plain text; undefined when there is none or no `man`. */
async function readMan(page: string, env: Record<string, string>, cwd: string) {
  const man = findProgram("man", cwd, env.PATH ?? "");
  if (!man) return undefined;
  const got = await runHelp(
    man,
    ["--nh", "--nj", "-P", "cat", page],
    {
      ...env,
      MANWIDTH: "80",
    },
    cwd,
    MAN_MAX_BYTES,
  );
  if (typeof got === "string" || got.fromStderr) return undefined;
  if (got.code !== 0 && !got.capped) return undefined;
  return readManPage(page, got.text);
}
