/**
 * Reads a command's arguments against its option table (`options.ts`) the way the program
 * will: GNU getopt (options anywhere, combined short options, the first that takes a value
 * taking the rest of the word, long options by unique prefix, `--` ends them) or find's
 * expression (read to the end, `--` included). An option the table does not hold, an
 * ambiguous prefix, or a dangerous option gives a `problem`: the command is then not
 * read-only, whatever rule allows it (the judge fails closed).
 *
 * Pure: no file system, no processes.
 *
 * @module
 */
import type { ProgramOptions } from "./options.ts";

/** One command's arguments, read. */
export interface ReadArgs {
  /** Options, long ones written out in full (`--out=x` → `--output=x`), short ones split. */
  flags: string[];
  /** Every other word (operands and option values), in order. */
  words: string[];
  /** Values of options that write a file (`--output=F`, `find -fprint F`). */
  writes: string[];
  /** Why the command is not read-only (an unknown or dangerous option), if it is not. */
  problem?: string;
  /** find's `-exec … ;` commands: [first, end) indices into the arguments. */
  commands: [number, number][];
}

const DANGER: Record<string, string> = {
  write: "writes files",
  exec: "starts other programs",
  follow: "follows symlinks wherever they lead",
  list: "reads the files a list names",
  config: "makes git read config or programs the line names",
};

/** The kind of an option: how it takes a value, and its danger (if any). */
export function optionKind(kind: string): { arg: string; danger?: string } {
  const [arg, danger] = kind.split(" ");
  return { arg, danger };
}

/** Why an option of this kind makes a command not read-only, or undefined. */
export function dangerOf(program: string, option: string, kind: string): string | undefined {
  const { danger } = optionKind(kind);
  return danger ? `\`${program} ${option}\` ${DANGER[danger] ?? danger}` : undefined;
}

/** Why an option's value makes it dangerous (`--format=%G?`), or undefined. */
function valueDanger(
  program: string,
  spec: ProgramOptions,
  option: string,
  value: string,
): string | undefined {
  const rule = spec.values && Object.hasOwn(spec.values, option) ? spec.values[option] : undefined;
  if (!rule || !new RegExp(rule[0]).test(value)) return undefined;
  return `\`${program} ${option}=${value}\` ${DANGER[rule[1]] ?? rule[1]}`;
}

/**
 * Finds a long option as getopt does: the exact name, else the one option it abbreviates.
 *
 * @returns the full name, or a problem (unknown, ambiguous)
 */
export function expandLong(
  program: string,
  spec: ProgramOptions,
  given: string,
): { name: string } | { problem: string } {
  if (Object.hasOwn(spec.options, given)) return { name: given };
  const matches = Object.keys(spec.options).filter((k) =>
    k.startsWith("--") && k.startsWith(given)
  );
  if (matches.length === 1) return { name: matches[0] };
  if (matches.length > 1) {
    return {
      problem: `\`${program} ${given}\` is ambiguous (${matches.slice(0, 4).join(", ")}${
        matches.length > 4 ? ", …" : ""
      }), so what it does cannot be told`,
    };
  }
  return { problem: unknown(program, given) };
}

function unknown(program: string, option: string): string {
  return `\`${program} ${option}\`: an option magi does not know, so it cannot tell what it does`;
}

/**
 * Looks the option `key` up (written `given` on the line), records it among the flags and
 * fails the command where it is unknown or dangerous by its kind alone.
 *
 * @returns its kind, or undefined for an option magi does not know
 */
function flagOf(
  program: string,
  spec: ProgramOptions,
  key: string,
  given: string,
  out: ReadArgs,
  fail: (p: string | undefined) => void,
): ReturnType<typeof optionKind> | undefined {
  const kind = Object.hasOwn(spec.options, key) ? spec.options[key] : undefined;
  fail(kind === undefined ? unknown(program, given) : dangerOf(program, given, kind));
  out.flags.push(given);
  return kind === undefined ? undefined : optionKind(kind);
}

/**
 * Reads arguments against a program's options.
 *
 * @param program the program's name, for messages (`git diff`)
 * @param args the words after the program
 */
export function readOptions(program: string, spec: ProgramOptions, args: string[]): ReadArgs {
  const out: ReadArgs = { flags: [], words: [], writes: [], commands: [] };
  const fail = (problem: string | undefined) => {
    if (problem && out.problem === undefined) out.problem = problem;
  };
  if (spec.style === "none") {
    out.words.push(...args);
    return out;
  }
  if (spec.style === "find") return readFind(program, spec, args, out, fail);
  let ended = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (ended || a === "-" || !a.startsWith("-")) {
      out.words.push(a);
      continue;
    }
    if (a === "--") {
      ended = true;
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(a)) {
      out.flags.push(a);
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const given = eq > 0 ? a.slice(0, eq) : a;
      const found = expandLong(program, spec, given);
      if ("problem" in found) {
        fail(found.problem);
        out.flags.push(a);
        continue;
      }
      const kind = spec.options[found.name];
      const { arg } = optionKind(kind);
      fail(dangerOf(program, found.name, kind));
      let value: string | undefined = eq > 0 ? a.slice(eq + 1) : undefined;
      if (arg === "flag" && value !== undefined) {
        fail(`\`${program} ${found.name}\` takes no value, yet was given one`);
      }
      out.flags.push(value === undefined ? found.name : `${found.name}=${value}`);
      if (arg === "value" && value === undefined && i + 1 < args.length) {
        value = args[++i];
        out.words.push(value);
      }
      if (value !== undefined && optionKind(kind).danger === "write") out.writes.push(value);
      if (value !== undefined) fail(valueDanger(program, spec, found.name, value));
      continue;
    }
    // A cluster of short options: `-la`, `-n5`, `-C3`.
    for (let k = 1; k < a.length; k++) {
      const key = `-${a[k]}`;
      const found = flagOf(program, spec, key, key, out, fail);
      if (found === undefined || found.arg === "flag") continue;
      const { arg, danger } = found;
      let value: string | undefined = k + 1 < a.length ? a.slice(k + 1) : undefined;
      if (value === undefined && arg === "value" && i + 1 < args.length) value = args[++i];
      if (value !== undefined) {
        out.words.push(value);
        if (danger === "write") out.writes.push(value);
        fail(valueDanger(program, spec, key, value));
      }
      break;
    }
  }
  return out;
}

/**
 * find: `-H -L -P -D x -Ox` first, then paths, then the expression — primaries read to the
 * end of the line, after `--` too (GNU find reads `find -- . -exec …` as an expression).
 */
function readFind(
  program: string,
  spec: ProgramOptions,
  args: string[],
  out: ReadArgs,
  fail: (p: string | undefined) => void,
): ReadArgs {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") continue;
    if (!a.startsWith("-") || a === "-" || /^[()!,]$/.test(a)) {
      out.words.push(a);
      continue;
    }
    let key = a;
    if (/^-O\d*$/.test(a)) key = "-O";
    if (/^-newer[aBcmt][aBcmt]$/.test(a)) key = "-newer";
    const found = flagOf(program, spec, key, a, out, fail);
    if (found === undefined) continue;
    const { arg, danger } = found;
    if (arg === "command") {
      // `-exec CMD ARGS… ;` or `+`: CMD is a command of its own.
      let end = i + 1;
      while (end < args.length && args[end] !== ";" && args[end] !== "+") end++;
      out.commands.push([i + 1, end]);
      out.words.push(...args.slice(i + 1, end + 1));
      i = end;
      continue;
    }
    if (arg === "value" && i + 1 < args.length) {
      const value = args[++i];
      out.words.push(value);
      if (danger === "write") out.writes.push(value);
    }
  }
  return out;
}
