/**
 * Reading a `run` line the way bash will (SPEC S8.1): the line is parsed with mvdan/sh's
 * parser (npm `mvdan-sh`, the project's own JavaScript build) and every simple command is
 * collected — in pipelines, lists, subshells, blocks, loops, `$(…)`, backticks and process
 * substitutions. Wrappers (the table in `wrappers.ts`: `timeout`, `env` (and its `-S` string),
 * `sudo`, `strace`, `unshare`, `busybox APPLET`, `xargs`, `sh -c '…'` / `bash -c '…'`,
 * recursively, and more) are unwrapped to the command they start, as is `find -exec CMD ;`.
 * Each command's options are read against its program's table (`options.ts`, through
 * `option_reader.ts`): combined short flags are split (`-rf` → `-r -f`), abbreviated long
 * options written out, git's own options and find's expression understood; an option the
 * table does not hold sets {@link SimpleCommand.optionProblem}. Words that bash would expand
 * (`$X`, `$(…)`, `{a,b}`, `~user`, globs
 * that can reach dot folders) are marked dynamic: such a command can be asked about, never
 * allowed. Anything this module cannot read with certainty becomes a problem (a reason to ask).
 *
 * Pure: no file system, no processes.
 *
 * @module
 */
import { requireModule } from "../core/lazy_require.ts";
import { isWrapper, wrapperOptions, WRAPPERS } from "./wrappers.ts";
import { dangerOf, optionKind, readOptions } from "./option_reader.ts";
import { PROGRAM_OPTIONS } from "./options.ts";
import { GIT_BUILTINS, GIT_GLOBAL_OPTIONS, GIT_SUBCOMMAND_OPTIONS } from "./options_git.ts";
import { shellWord } from "../core/quote.ts";

/** How a command uses a path: reads it, or writes it (an output redirect, `time -o`). */
export interface PathUse {
  /** The word as bash would see it after quote removal (`~` not expanded). */
  path: string;
  access: "read" | "write";
  /** Relative paths resolve against this folder (from `git -C` or `env -C`), if set. */
  base?: string;
}

/** One simple command, after unwrapping. */
export interface SimpleCommand {
  /** The program as written (`git`, `./x`, `/usr/bin/ls`); "" when it is dynamic. */
  program: string;
  /** Flags, normalised: combined short flags split, in the order written. */
  flags: string[];
  /** The other words after the program (positionals, including flag values), in order. */
  words: string[];
  /** Some word (or the program) is only known when bash runs it. */
  dynamic: boolean;
  /** Path-like words and redirections. */
  paths: PathUse[];
  /** Variables assigned for this command (`FOO=1 cmd`, `env FOO=1 cmd`). */
  assigns: string[];
  /** Wrappers removed to reach it, outermost first (`timeout`, `sh -c`). */
  via: string[];
  /** The command as one line, for messages. */
  text: string;
  /**
   * bash itself looks the program up (not a wrapper that execs it, nor a body with no
   * shell): a builtin's name (`echo`) runs bash's own builtin, not a program of that name.
   */
  shell?: boolean;
  /** The folder the program moves to first (`git -C DIR`), relative to the line's folder. */
  chdir?: string;
  /**
   * Why the command is not read-only by its program's option table (`options.ts`): an
   * option magi does not know, an ambiguous abbreviation, or one that writes, starts
   * programs or follows symlinks. Such a command is asked about, whatever rule allows it.
   */
  optionProblem?: string;
}

/** What a line holds. */
export interface Line {
  commands: SimpleCommand[];
  /** Reasons the line cannot be judged with certainty (each makes it at least `ask`). */
  problems: string[];
  /**
   * The program words of the wrappers unwrapped (`timeout`, `./nohup`, `sh`): each starts
   * the command inside it, so each must be the program it claims to be. bash's own builtins
   * (`command`, `builtin`, `exec` where bash reads them) are not listed; the same names
   * started by another wrapper (`env command ls`) or with no shell are programs, and listed.
   */
  launchers: string[];
}

// deno-lint-ignore no-explicit-any
type Node = any;
/**
 * mvdan/sh's `syntax` package, loaded on the first line read: the 1.5 MB script takes about
 * 100 ms to load, and most commands read no `run` line. `require` keeps readers synchronous.
 */
const syntax: Node = new Proxy({}, {
  get: (_, key) => (loaded ??= (requireModule("mvdan-sh") as { syntax: Node }).syntax)[key],
});
let loaded: Node;
/** One parser for every line: a new one costs several times the parse (mvdan/sh resets it). */
let parser: Node | undefined;

const MAX_DEPTH = 8;
/** Programs whose options are single-dash words (`find -name`): never split. */
const LONG_SINGLE_DASH = new Set(["find", "java", "gcc", "cc", "clang", "go", "tcpdump"]);
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);
const DEV_FILES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);

// mvdan/sh redirection tokens (syntax/tokens.go): > >> < <> <& >& >| << <<- <<< &> &>>
const RDR_WRITE = new Set([54, 55, 57, 60, 64, 65]);
const RDR_READ = new Set([56]);
const RDR_DUP = new Set([58, 59]);

/** How many lines {@link readLine} remembers. */
const LINES_KEPT = 64;
/** Lines read before, newest last: reading depends on nothing but the line's text. */
const linesRead = new Map<string, Line>();

/**
 * Parses a command line and collects its simple commands. A line read before is not parsed
 * again (one call reads its line two or three times, and mvdan/sh takes about a millisecond
 * for `echo hi`): what comes back depends on the text alone (the parser and the static option
 * and wrapper tables, never the file system or the environment), and is a copy the caller
 * may change.
 *
 * @param line the `run` tool's `command` field
 * @returns the commands and the problems; a line that does not parse gives one problem
 */
export function readLine(line: string): Line {
  const known = linesRead.get(line);
  if (known) {
    linesRead.delete(line);
    linesRead.set(line, known);
    return structuredClone(known);
  }
  const out: Line = { commands: [], problems: [], launchers: [] };
  collect(line, [], out, 0);
  if (linesRead.size >= LINES_KEPT) linesRead.delete(linesRead.keys().next().value!);
  linesRead.set(line, structuredClone(out));
  return out;
}

/**
 * Reads a command given as its words, as a program started with no shell gets them (a Lua
 * body's `magi.exec`): nothing is parsed or expanded, so no word is dynamic; wrappers are
 * unwrapped as in {@link readLine} (a `sh -c` script is then parsed).
 *
 * @param argv the program, then its arguments
 */
export function readArgv(argv: readonly string[]): Line {
  const out: Line = { commands: [], problems: [], launchers: [] };
  if (argv.length > 0) {
    judgeArgv(argv.map((text) => ({ text, dynamic: false })), [], [], out, 0, [], false, false);
  }
  return out;
}

function collect(
  line: string,
  via: string[],
  out: Line,
  depth: number,
  inherited: string[] = [],
): void {
  if (depth > MAX_DEPTH) {
    out.problems.push(`commands nested deeper than ${MAX_DEPTH} levels`);
    return;
  }
  let file: Node;
  try {
    file = (parser ??= syntax.NewParser()).Parse(line, "");
  } catch (error) {
    // deno-lint-ignore no-explicit-any
    const message = typeof (error as any)?.Error === "function"
      // deno-lint-ignore no-explicit-any
      ? (error as any).Error()
      : String(error);
    out.problems.push(`the line does not parse: ${message}`);
    return;
  }
  syntax.Walk(file, (node: Node) => {
    if (node === null || node === undefined) return true;
    switch (syntax.NodeType(node)) {
      case "CallExpr":
        simple(node, via, out, depth, inherited);
        return true;
      case "Redirect":
        redirect(node, out);
        return true;
      case "BinaryCmd":
        // After `|`, `time` is no keyword to bash: it runs the program `time` from PATH,
        // while the parser still reads a time clause.
        if (
          (node.Op === 12 || node.Op === 13) && node.Y?.Cmd &&
          syntax.NodeType(node.Y.Cmd) === "TimeClause"
        ) {
          out.problems.push("`time` after `|` is the program `time`, not bash's keyword");
        }
        return true;
      case "DeclClause": {
        const variant = node.Variant?.Value ?? "declare";
        out.commands.push(command(variant, [], [], false, [], [], via, `${variant} …`));
        return true;
      }
      default: {
        const problem = REFUSED_NODES.get(syntax.NodeType(node));
        if (problem) out.problems.push(problem);
        return true;
      }
    }
  });
}

const ARITHMETIC = "the line evaluates arithmetic (`(( ))` or `let`)";

/** The syntax that makes a line a problem wherever it stands, with the problem it names. */
const REFUSED_NODES = new Map<string, string>([
  ["FuncDecl", "the line defines a function"],
  ["CoprocClause", "the line starts a coprocess"],
  // bash evaluates arithmetic on words at run time: `a[$(cmd)]` inside runs cmd.
  ["LetClause", ARITHMETIC],
  ["ArithmCmd", ARITHMETIC],
  // `[[ 'a[$(cmd)]' -eq 0 ]]` runs cmd; `[[ -f /x ]]` looks at any path.
  ["TestClause", "the line has a `[[ ]]` test, which bash may evaluate as code"],
]);

/** Redirections belong to the statement; the path is judged on its own. */
function redirect(node: Node, out: Line): void {
  const op = node.Op as number;
  if (!node.Word) return;
  const w = word(node.Word);
  if (RDR_DUP.has(op)) {
    // `>&2`, `<&0`, `>&-` duplicate descriptors; `>&file` writes a file (like `&>file`).
    if (!w.dynamic && /^(\d+-?|-)$/.test(w.text)) return;
    if (w.dynamic) {
      out.problems.push(`a redirection to a dynamic path (${w.text})`);
      return;
    }
    const access = op === 58 ? "read" : "write"; // <& reads, >& writes
    out.commands.push(
      command(
        access === "write" ? ">" : "<",
        [],
        [w.text],
        false,
        [{ path: w.text, access }],
        [],
        [],
        `${access === "write" ? ">&" : "<&"} ${w.text}`,
      ),
    );
    return;
  }
  if (!RDR_WRITE.has(op) && !RDR_READ.has(op)) return; // here-docs and here-strings
  if (w.dynamic) {
    out.problems.push(`a redirection to a dynamic path (${w.text})`);
    return;
  }
  if (DEV_FILES.has(w.text)) return;
  out.commands.push(
    command(
      RDR_WRITE.has(op) ? ">" : "<",
      [],
      [w.text],
      false,
      [{ path: w.text, access: RDR_WRITE.has(op) ? "write" : "read" }],
      [],
      [],
      `${RDR_WRITE.has(op) ? ">" : "<"} ${w.text}`,
    ),
  );
}

interface WordText {
  text: string;
  dynamic: boolean;
}

/** A word's text after quote removal, and whether bash would expand it. */
function word(w: Node): WordText {
  let text = "";
  let dynamic = false;
  const parts: Node[] = w.Parts ?? [];
  parts.forEach((part: Node, i: number) => {
    switch (syntax.NodeType(part)) {
      case "Lit": {
        const raw = part.Value as string;
        if (/[{}]/.test(raw) && /[{][^}]*(,|\.\.)[^}]*[}]/.test(raw)) dynamic = true;
        if (i === 0 && /^~[^/]/.test(raw)) dynamic = true; // ~user, ~+, ~-
        // A glob's matches are only known when bash runs it, and one may be a symlink
        // leading out of the roots (`cat ./*`): such a word is judged as unknown.
        if (/(?<!\\)[*?[]/.test(raw)) dynamic = true;
        text += raw.replace(/\\(.)/gs, "$1");
        break;
      }
      case "SglQuoted":
        if (part.Dollar) dynamic = true; // $'…' escapes
        text += part.Value;
        break;
      case "DblQuoted":
        for (const inner of part.Parts ?? []) {
          if (syntax.NodeType(inner) === "Lit") {
            text += (inner.Value as string).replace(/\\([$`"\\\n])/g, "$1");
          } else {
            dynamic = true;
            text += "$…";
          }
        }
        break;
      default:
        dynamic = true;
        text += "$…";
    }
  });
  return { text, dynamic };
}

function command(
  program: string,
  flags: string[],
  words: string[],
  dynamic: boolean,
  paths: PathUse[],
  assigns: string[],
  via: string[],
  text: string,
): SimpleCommand {
  return { program, flags, words, dynamic, paths, assigns, via, text };
}

function simple(node: Node, via: string[], out: Line, depth: number, inherited: string[]): void {
  const assigns: string[] = [
    ...inherited,
    ...(node.Assigns ?? []).map((a: Node) => a.Name?.Value ?? ""),
  ];
  const argv: WordText[] = (node.Args ?? []).map(word);
  if (argv.length === 0) {
    if (assigns.length > 0) {
      out.commands.push(command("", [], [], false, [], assigns, via, `${assigns.join(" ")}=…`));
    }
    return;
  }
  judgeArgv(argv, assigns, via, out, depth, [], false, true);
}

/** Unwraps wrappers, then records the command itself. */
function judgeArgv(
  argv: WordText[],
  assigns: string[],
  via: string[],
  out: Line,
  depth: number,
  extraPaths: PathUse[],
  forcedDynamic: boolean,
  shell: boolean,
): void {
  const [head, ...rest] = argv;
  const name = head.dynamic ? "" : basename(head.text);
  const unwrapped = head.dynamic ? undefined : unwrap(name, rest);
  if (unwrapped) {
    // Where bash reads `command`, `builtin` or `exec`, they are its own builtins; started by
    // a wrapper or with no shell (`env command ls`), the name is a program found on PATH.
    const builtin = shell && !head.text.includes("/") && SHELL_BUILTIN_WRAPPERS.has(name);
    if (!builtin) out.launchers.push(head.text);
    // `command ls` and `builtin echo`: bash looks the inner command up too; `exec` execs it.
    const innerShell = builtin && name !== "exec";
    const nextVia = [...via, unwrapped.label];
    if (unwrapped.problem) out.problems.push(unwrapped.problem);
    if (unwrapped.script !== undefined) {
      if (unwrapped.script.dynamic) {
        out.problems.push(`${unwrapped.label} runs a dynamic script`);
      } else {
        // Variables set on the way (`env PATH=… sh -c …`) hold for every command inside.
        collect(unwrapped.script.text, nextVia, out, depth + 1, [...assigns, ...unwrapped.assigns]);
      }
      return;
    }
    const inner = unwrapped.rest;
    const paths = [...extraPaths, ...unwrapped.paths];
    const moreAssigns = [...assigns, ...unwrapped.assigns];
    if (inner.length === 0) {
      // `env` or `command -v` alone: record the wrapper itself.
      record(head, rest, moreAssigns, via, out, paths, forcedDynamic, shell, depth);
      return;
    }
    judgeArgv(
      inner,
      moreAssigns,
      nextVia,
      out,
      depth,
      paths,
      forcedDynamic || unwrapped.dynamic,
      innerShell,
    );
    return;
  }
  record(head, rest, assigns, via, out, extraPaths, forcedDynamic, shell, depth);
}

/** Wrappers that are bash builtins where bash reads the command. */
const SHELL_BUILTIN_WRAPPERS = new Set(["command", "builtin", "exec"]);

function record(
  head: WordText,
  rest: WordText[],
  assigns: string[],
  via: string[],
  out: Line,
  extraPaths: PathUse[],
  forcedDynamic: boolean,
  shell: boolean,
  depth = 0,
): void {
  const program = head.dynamic ? "" : head.text;
  let args = rest;
  const paths = [...extraPaths];
  let base: string | undefined;
  let problem: string | undefined;
  const fail = (p: string | undefined) => {
    problem ??= p;
  };
  const leading: string[] = [];
  const name = basename(program);
  let spec = Object.hasOwn(PROGRAM_OPTIONS, name) ? PROGRAM_OPTIONS[name] : undefined;
  let label = name;
  if (name === "git") {
    // git's own options before the subcommand: -C DIR moves git; the others are kept as
    // flags, so `git -c x=y push` is `git push` to a rule, with the flag `-c`.
    // A path option (`--git-dir=x`) is relative to the folder the -C options before it reached.
    const git = gitGlobals(args);
    for (const step of git.steps) {
      if (step.dir.dynamic) forcedDynamic = true;
      paths.push({ path: step.dir.text, access: "read", base });
      if (step.chdir) base = base === undefined ? step.dir.text : joinPath(base, step.dir.text);
    }
    leading.push(...git.flags);
    fail(git.problem);
    args = git.rest;
    const sub = args[0];
    spec = undefined;
    if (sub && !sub.dynamic) {
      spec = Object.hasOwn(GIT_SUBCOMMAND_OPTIONS, sub.text)
        ? GIT_SUBCOMMAND_OPTIONS[sub.text]
        : undefined;
      label = `git ${sub.text}`;
      if (!GIT_BUILTINS.has(sub.text)) {
        fail(
          `\`git ${sub.text}\` is not a built-in git command: it may be an alias from a config magi cannot see`,
        );
      }
    }
  }
  let flags: string[];
  let words: string[];
  const texts = args.map((a) => a.text);
  if (spec) {
    const isGit = name === "git";
    const read = readOptions(label, spec, isGit ? texts.slice(1) : texts);
    flags = [...leading, ...read.flags];
    words = isGit ? [texts[0], ...read.words] : read.words;
    fail(read.problem);
    for (const w of read.writes) paths.push({ path: w, access: "write", base });
    // find's `-exec CMD ;`: CMD is a command of its own, judged (and denied) as such; `{}`
    // stands for names only known when find runs.
    for (const [from, to] of read.commands) {
      const inner = args.slice(from, to).map((w) => ({
        text: w.text,
        dynamic: w.dynamic || w.text.includes("{}"),
      }));
      if (inner.length === 0) continue;
      judgeArgv(
        inner,
        assigns,
        [...via, `${name} -exec`],
        out,
        depth + 1,
        [],
        forcedDynamic,
        false,
      );
    }
  } else {
    const split = !LONG_SINGLE_DASH.has(name);
    const normal = normaliseArgs(texts, split);
    flags = [...leading, ...normal.flags];
    words = normal.words;
  }
  for (const w of [...flags, ...words]) {
    const candidate = pathCandidate(w);
    if (candidate !== undefined) paths.push({ path: candidate, access: "read", base });
  }
  if (program === "cd" && words.length === 0) paths.push({ path: "~", access: "read" });
  const dynamic = forcedDynamic || head.dynamic || rest.some((a) => a.dynamic);
  const text = [head, ...rest].map((w) => shellWord(w.text)).join(" ");
  out.commands.push({
    ...command(program, flags, words, dynamic, paths, assigns, via, text),
    shell,
    ...(base === undefined ? {} : { chdir: base }),
    ...(problem === undefined ? {} : { optionProblem: problem }),
  });
}

/**
 * git's options before its subcommand, read as git reads them (exact names only): the flags
 * kept, and in order the folders they name — `-C DIR` (git moves there) and the paths of
 * `--git-dir` and `--work-tree`.
 */
function gitGlobals(args: WordText[]): {
  steps: { dir: WordText; chdir: boolean }[];
  flags: string[];
  problem?: string;
  rest: WordText[];
} {
  const steps: { dir: WordText; chdir: boolean }[] = [];
  const flags: string[] = [];
  let problem: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const t = args[i].text;
    if (args[i].dynamic || !t.startsWith("-")) break;
    const eq = t.indexOf("=");
    const key = eq > 0 && t.startsWith("--") ? t.slice(0, eq) : t;
    const kind = Object.hasOwn(GIT_GLOBAL_OPTIONS, key) ? GIT_GLOBAL_OPTIONS[key] : undefined;
    if (kind === undefined) {
      problem ??= `\`git ${key}\`: an option magi does not know, so it cannot tell what it does`;
      flags.push(t);
      continue;
    }
    const { arg } = optionKind(kind);
    problem ??= dangerOf("git", key, kind);
    let value: WordText | undefined = eq > 0 && t.startsWith("--")
      ? { text: t.slice(eq + 1), dynamic: false }
      : undefined;
    if (arg === "value" && value === undefined && i + 1 < args.length) value = args[++i];
    if (key === "-C") {
      if (value) steps.push({ dir: value, chdir: true });
      continue;
    }
    flags.push(t);
    if (value && (key === "--git-dir" || key === "--work-tree")) {
      steps.push({ dir: value, chdir: false });
    }
  }
  return { steps, flags, problem, rest: args.slice(i) };
}

function joinPath(base: string, dir: string): string {
  return dir.startsWith("/") ? dir : `${base.replace(/\/$/, "")}/${dir}`;
}

/**
 * A word that may name a path: every word but a flag (a flag's `=value` counts) and a URL.
 * Checking a word that is not a path costs nothing — a relative word resolves inside the
 * working folder — while a bare name can be a symlink leading out of the roots.
 */
export function pathCandidate(w: string): string | undefined {
  let value = w;
  if (w.startsWith("-") && w !== "-") {
    const eq = w.indexOf("=");
    if (eq < 0) return undefined;
    value = w.slice(eq + 1);
  }
  if (value === "" || value === "-") return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined; // a URL
  return value;
}

/**
 * Splits arguments into flags and other words: `-abc` becomes `-a -b -c` (unless the
 * program takes single-dash long options), `--x=v` stays one flag, and after `--` every
 * word is a positional.
 */
export function normaliseArgs(
  args: string[],
  splitShort = true,
): { flags: string[]; words: string[] } {
  const flags: string[] = [];
  const words: string[] = [];
  let ended = false;
  for (const a of args) {
    if (ended || a === "-" || !a.startsWith("-")) {
      words.push(a);
    } else if (a === "--") {
      ended = true;
    } else if (!a.startsWith("--") && splitShort && /^-[A-Za-z0-9]{2,}$/.test(a)) {
      for (const c of a.slice(1)) flags.push(`-${c}`);
    } else {
      flags.push(a);
    }
  }
  return { flags, words };
}

function basename(p: string): string {
  const i = p.lastIndexOf("/");
  return i < 0 ? p : p.slice(i + 1);
}

interface Unwrapped {
  label: string;
  rest: WordText[];
  paths: PathUse[];
  assigns: string[];
  /** The extra arguments of the inner command are unknown (xargs). */
  dynamic: boolean;
  /** `sh -c SCRIPT`: the script to read instead of `rest`. */
  script?: WordText;
  /** `env -S STRING`: the string env splits into the command. */
  split?: string;
  /** `su -c LINE`, `flock FILE -c LINE`: a line a shell runs. */
  command?: WordText;
  problem?: string;
}

function unwrap(name: string, args: WordText[]): Unwrapped | undefined {
  if (SHELLS.has(name)) {
    const shell = unwrapShell(name, args);
    // `busybox rm x`: busybox runs its applet `rm`, judged as rm.
    if (shell || name !== "busybox" || args.length === 0 || args[0].dynamic) return shell;
    if (args[0].text.startsWith("-")) return undefined;
    return { label: "busybox", rest: args, paths: [], assigns: [], dynamic: false };
  }
  if (!isWrapper(name)) return undefined;
  const spec = WRAPPERS[name];
  const known = wrapperOptions(name);
  const result: Unwrapped = { label: name, rest: [], paths: [], assigns: [], dynamic: false };
  if (spec.ask) result.problem = spec.ask;
  const unknown = (option: string) => {
    result.problem ??= `\`${name} ${option}\`: an option magi does not know, so it cannot ` +
      "tell which command it starts";
  };
  let i = 0;
  let operands = spec.operands;
  while (i < args.length) {
    const a = args[i];
    if (a.dynamic) {
      result.problem = `${name} has a dynamic option or operand (${a.text})`;
      return { ...result, rest: args.slice(i), dynamic: true };
    }
    const t = a.text;
    if (t === "--") {
      i++;
      break;
    }
    if (name === "env" && t === "-") {
      i++; // `env -` is `env -i`
      continue;
    }
    if (t.startsWith("-") && t !== "-" && !(name === "nice" && /^-\d+$/.test(t))) {
      // As getopt reads it: a long option may be abbreviated (`--split-s=x`), and short
      // options combine, the first that takes a value taking the rest (`-vS./x`, `-la x`).
      let key: string | undefined;
      let value: string | undefined;
      let next = 0;
      if (t.startsWith("--")) {
        const eq = t.indexOf("=");
        const given = eq > 0 ? t.slice(0, eq) : t;
        const all = [...known.valued, ...known.flags, ...known.optional, ...known.valued2]
          .filter((v) => v.startsWith("--"));
        const matches = all.includes(given) ? [given] : all.filter((v) => v.startsWith(given));
        if (matches.length > 1) result.problem = `${name}: the option "${given}" is ambiguous`;
        if (matches.length === 0 && !spec.anyLong) unknown(given);
        if (matches.length > 0) {
          key = matches[0];
          if (eq > 0) value = t.slice(eq + 1);
          else if (known.valued.has(key)) next = 1;
          else if (known.valued2.has(key)) next = 2;
        }
      } else {
        for (let k = 1; k < t.length; k++) {
          const c = `-${t[k]}`;
          if (known.flags.has(c)) continue;
          if (known.optional.has(c)) break; // its value, if any, is the rest of the word
          if (!known.valued.has(c)) {
            unknown(c);
            continue;
          }
          key = c;
          if (k + 1 < t.length) value = t.slice(k + 1);
          else next = 1;
          break;
        }
      }
      for (let n = 0; n < next; n++) {
        const v = args[i + 1];
        if (v?.dynamic) {
          result.problem = `${name} has a dynamic option value (${v.text})`;
          return { ...result, rest: args.slice(i + 2), dynamic: true };
        }
        if (n === 0) value = v?.text;
        if (v !== undefined) i++;
      }
      if (key !== undefined && value !== undefined) optionValue(name, key, value, result);
      i++;
      continue;
    }
    if (name === "nice" && /^-\d+$/.test(t)) {
      i++;
      continue;
    }
    if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) {
      result.assigns.push(t.slice(0, t.indexOf("=")));
      i++;
      continue;
    }
    if (operands > 0) {
      operands--;
      i++;
      continue;
    }
    break;
  }
  result.rest = args.slice(i);
  if (result.split !== undefined) {
    // `env -S 'rm x' y`: env splits the string by its own rules (not bash's) and reads the
    // words as its arguments again, options and assignments included, then the rest.
    const split = envSplit(result.split);
    if (split.problem) result.problem = split.problem;
    const again = unwrap("env", [
      ...split.words.map((text) => ({ text, dynamic: split.dynamic })),
      ...result.rest,
    ])!;
    return {
      ...again,
      label: name,
      paths: [...result.paths, ...again.paths],
      assigns: [...result.assigns, ...again.assigns],
      dynamic: again.dynamic || split.dynamic,
      problem: result.problem ?? again.problem,
    };
  }
  // su reads options anywhere (`su root -c CMD`), as getopt permutes them.
  if ((name === "su" || name === "runuser") && result.command === undefined) {
    const at = result.rest.findIndex((w) => /^(-c|--command(=|$)|--co)/.test(w.text));
    if (at >= 0) {
      const w = result.rest[at];
      const eq = w.text.indexOf("=");
      const value = eq > 0
        ? w.text.slice(eq + 1)
        : w.text.startsWith("-c") && w.text.length > 2
        ? w.text.slice(2)
        : result.rest[at + 1]?.text;
      const dynamic = w.dynamic || (eq < 0 && w.text.length <= 2 && !!result.rest[at + 1]?.dynamic);
      if (value !== undefined) result.command = { text: value, dynamic };
    }
  }
  // `su -c CMD`, `flock F -c CMD`: CMD is a line for a shell.
  if (result.command !== undefined) return { ...result, rest: [], script: result.command };
  // `watch CMD ARGS…` joins its words with spaces and hands them to `sh -c` (`-x`: execs them).
  if (name === "watch" && !args.slice(0, i).some((a) => /^-[a-z]*x|^--exec$/.test(a.text))) {
    if (result.rest.length === 0) return result;
    const text = result.rest.map((w) => w.text).join(" ");
    return { ...result, rest: [], script: { text, dynamic: result.rest.some((w) => w.dynamic) } };
  }
  if (name === "xargs") {
    result.dynamic = true;
    if (result.rest.length === 0) result.rest = [{ text: "echo", dynamic: false }];
  }
  return result;
}

/**
 * Splits an `env -S` string as GNU env does: blanks separate words outside quotes; `'…'`
 * knows only `\\` and `\'`; elsewhere `\_` is a blank (a separator outside quotes), `\c`
 * ends the string, `\t` and the like are control characters; `#` at a word's start begins
 * a comment; `${NAME}` is the variable's value (so the words are dynamic).
 */
export function envSplit(s: string): { words: string[]; dynamic: boolean; problem?: string } {
  const words: string[] = [];
  let dynamic = false;
  let cur: string | undefined;
  let quote: "'" | '"' | undefined;
  const controls: Record<string, string> = { f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };
  const end = () => {
    if (cur !== undefined) words.push(cur);
    cur = undefined;
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else if (c === "\\" && (s[i + 1] === "\\" || s[i + 1] === "'")) cur += s[++i];
      else cur += c;
      continue;
    }
    if (!quote && /[ \t\n\v\f\r]/.test(c)) {
      end();
      continue;
    }
    if (!quote && c === "#" && cur === undefined) break;
    if (c === "'" || c === '"') {
      if (quote === '"' && c === "'") cur += c;
      else {
        quote = quote ? undefined : c;
        cur ??= "";
      }
      continue;
    }
    if (c === "$") {
      const m = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}/.exec(s.slice(i));
      if (!m) return { words, dynamic, problem: "env -S: a `$` not in `${NAME}`" };
      dynamic = true;
      cur = (cur ?? "") + "$…";
      i += m[0].length - 1;
      continue;
    }
    if (c === "\\") {
      const e = s[++i];
      if (e === "c") {
        if (quote) return { words, dynamic, problem: "env -S: `\\c` inside quotes" };
        break;
      }
      if (e === "_") {
        if (quote) cur += " ";
        else end();
      } else if (e !== undefined && controls[e]) cur = (cur ?? "") + controls[e];
      else if (e !== undefined && `"#$'\\`.includes(e)) cur = (cur ?? "") + e;
      else return { words, dynamic, problem: `env -S: an unknown escape "\\${e ?? ""}"` };
      continue;
    }
    cur = (cur ?? "") + c;
  }
  if (quote) return { words, dynamic, problem: "env -S: an unterminated quote" };
  end();
  return { words, dynamic };
}

/** A word as bash reads it literally (and as {@link SimpleCommand.text} shows it). */
export { shellWord } from "../core/quote.ts";

function optionValue(name: string, key: string, value: string, result: Unwrapped): void {
  if (
    (name === "su" || name === "runuser" || name === "flock") &&
    (key === "-c" || key === "--command")
  ) {
    result.command = { text: value, dynamic: false };
    return;
  }
  if (
    (name === "time" || name === "strace" || name === "ltrace") &&
    (key === "-o" || key === "--output")
  ) {
    result.paths.push({ path: value, access: "write" });
  } else if (name === "xargs" && (key === "-a" || key === "--arg-file")) {
    result.paths.push({ path: value, access: "read" });
  } else if (name === "env" && (key === "-C" || key === "--chdir")) {
    result.paths.push({ path: value, access: "read" });
    result.problem = `env -C changes the folder the command runs in ("${value}")`;
  } else if (name === "env" && (key === "-S" || key === "--split-string")) {
    result.problem = "env -S splits a string into a command";
    result.split = value;
  }
}

/** `sh -c SCRIPT`, `bash -lc SCRIPT`, `busybox sh -c SCRIPT`. */
function unwrapShell(name: string, args: WordText[]): Unwrapped | undefined {
  let list = args;
  let label = name;
  if (name === "busybox") {
    if (list.length === 0 || list[0].dynamic || !SHELLS.has(list[0].text)) return undefined;
    label = `busybox ${list[0].text}`;
    list = list.slice(1);
  }
  let hasC = false;
  let i = 0;
  for (; i < list.length; i++) {
    const t = list[i].text;
    if (list[i].dynamic) break;
    if (t === "--") {
      i++;
      break;
    }
    if (t === "-o" || t === "+o" || t === "-O" || t === "+O") {
      i++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(t)) {
      if (t.startsWith("-") && t.includes("c")) hasC = true;
      continue;
    }
    if (t.startsWith("--")) continue;
    break;
  }
  if (!hasC) return undefined; // a script file or stdin: judged as the shell program itself
  const base = { label: `${label} -c`, rest: [], paths: [], assigns: [], dynamic: false };
  if (i >= list.length) return { ...base, problem: `${label} -c has no script` };
  return { ...base, script: list[i] };
}
