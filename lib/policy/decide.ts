/**
 * The decision (SPEC S8.1): one call → `allow`, `ask` or `deny`, and the rule that made it.
 * The strictest matching rule wins (deny > ask > allow), so the order of rules cannot open a
 * hole. A `run` line is judged command by command (see `shell.ts`); the line gets the
 * strictest of its commands. A call no rule matches is asked about.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ConfigError } from "../core/errors.ts";
import { DEFAULT_RULES } from "./defaults.ts";
import { isInside } from "./roots.ts";
import { lenientReal, locateWith, type Lookups, physicalWith, systemLookups } from "./fs_facts.ts";
import {
  compileRule,
  type Decision,
  type Rule,
  ruleMatches,
  STRICTNESS,
  type Subject,
} from "./rules.ts";
import type { SandboxConfig } from "../config/sandbox_settings.ts";
import { type PathUse, readArgv, readLine, shellWord, type SimpleCommand } from "./shell.ts";

/** The loaded policy. */
export interface Policy {
  rules: Rule[];
  /** Real absolute paths. */
  roots: readonly string[];
  /** magi's own environment: HOME for `~`, PATH for the programs it trusts. */
  env: Record<string, string>;
  /** Run `run` and tools_dir tools inside bwrap (config `policy.sandbox`). */
  sandbox: boolean | SandboxConfig;
  /** When the policy was made — the session started (ms since the epoch). */
  since?: number;
}

/** The decision on one call. */
export interface Verdict {
  decision: Decision;
  /** The rule that made it; null when no rule matched or the line could not be judged. */
  rule: { id: string; origin: string; decision: Decision } | null;
  /** Why, in a few words, naming the command or path concerned. */
  reason: string;
  /**
   * Set when the judge cannot read what the line runs (words only bash knows, code handed to
   * an interpreter, a git alias or option that starts programs): a deny rule cannot be held
   * against it, so `--auto` does not approve it while a deny rule covers the tool.
   */
  unread?: string;
}

/** What is decided: a call after its arguments were checked. */
export interface CallFacts {
  tool: string;
  /** The tool's source: "builtin", "tools_dir", "shipped", "lua", "mcp". */
  source: string;
  args: Record<string, unknown>;
  /** The call's working directory (absolute). */
  cwd: string;
  /** PATH the tool's children get. */
  path?: string;
  /**
   * The words of a `run` command started directly, with no bash (a Lua body's `magi.exec`):
   * they are read as they are, not parsed from `args.command` (which only shows them), and
   * a shell builtin's name (`echo`) names whatever program PATH finds, checked like any.
   */
  argv?: readonly string[];
}

/** Config key `policy` (its shape lives with the config: lib/config/shapes.ts). */
export type { PolicyConfig } from "../config/shapes.ts";
import type { PolicyConfig } from "../config/shapes.ts";

/** Shell builtins: bash runs its own, whatever PATH holds. */
const SHELL_BUILTINS = new Set(["cd", "pwd", "echo", "true", "false", "test", "["]);

/**
 * Builds the policy from config: the default rules (less those in `disable`), then the
 * config's, each rule's `examples` checked.
 *
 * @throws ConfigError for a rule that does not compile or an example that fails
 */
export function loadPolicy(
  config: PolicyConfig | PolicySource[] | undefined,
  origin: string,
  roots: readonly string[],
  env: Record<string, string>,
  sourceOf: (tool: string) => string | undefined = () => undefined,
): Policy {
  const sources: PolicySource[] = Array.isArray(config)
    ? config
    : config
    ? [{ config, origin }]
    : [];
  const disabled = new Set<string>();
  for (const { config: c, origin: from } of sources) {
    const unknown = (c.disable ?? []).filter((id) => !DEFAULT_RULES.some((r) => r.id === id));
    if (unknown.length > 0) {
      throw new ConfigError(
        `config ${from}: key "policy.disable": no default rule ${
          unknown.map((u) => `"${u}"`).join(", ")
        } (default rules: ${DEFAULT_RULES.map((r) => r.id).join(", ")})`,
      );
    }
    for (const id of c.disable ?? []) disabled.add(id);
  }
  const rules: Rule[] = [];
  for (const r of DEFAULT_RULES) {
    if (!disabled.has(r.id!)) rules.push(compileRule(r, r.id!, "default", { lazy: true }));
  }
  let sandbox: boolean | SandboxConfig = false;
  for (const { config: c } of sources) {
    if (c.sandbox !== undefined && c.sandbox !== false) sandbox = c.sandbox;
  }
  const policy: Policy = { rules, roots, env, sandbox, since: Date.now() };
  for (const { config: c, origin: from } of sources) {
    (c.rules ?? []).forEach((r, i) => {
      const id = r.id ?? `rule ${i + 1}`;
      let rule: Rule;
      try {
        rule = compileRule(r, id, from);
      } catch (error) {
        throw new ConfigError(
          `config ${from}: key "policy.rules", rule "${id}": ${(error as Error).message}`,
        );
      }
      rules.push(rule);
      const problem = exampleProblem(policy, rule, sourceOf);
      if (problem) {
        throw new ConfigError(`config ${from}: key "policy.rules", rule "${id}": ${problem}`);
      }
    });
  }
  return policy;
}

/** The `policy` of one config file, and the file. */
export interface PolicySource {
  config: PolicyConfig;
  origin: string;
}

/**
 * The `policy` value of each config file, in merge order, as far as each may set it. The
 * person's own files — the user's config and an explicit one (`--config`, `MAGI_CONFIG`) —
 * count in full. A project's `.magi/config.jsonc` comes with the code it sits beside, so it
 * may only tighten: its `allow` rules and its `disable` are dropped (one warning each), and
 * it can turn the sandbox on but not give it the network.
 *
 * @param files the config files read, in merge order (`Config.files`)
 * @param trusted whether a file is the person's own
 * @param read reads one file's checked keys (`readConfigFile`)
 */
export function policySources(
  files: readonly string[],
  trusted: (file: string) => boolean,
  read: (file: string) => { policy?: PolicyConfig },
  warn: (message: string) => void,
): PolicySource[] {
  const out: PolicySource[] = [];
  for (const file of files) {
    const config = read(file).policy;
    if (!config) continue;
    if (trusted(file)) {
      out.push({ config, origin: file });
      continue;
    }
    const kept: PolicyConfig = { ...config };
    const named = (config.rules ?? []).map((r, i) => ({ ...r, id: r.id ?? `rule ${i + 1}` }));
    const loosening = named.filter((r) => r.decision === "allow");
    if (loosening.length > 0) {
      warn(
        `config ${file}: a project's policy may only tighten; ignored its allow rule(s) ${
          loosening.map((r) => `"${r.id}"`).join(", ")
        } (put them in your own config)`,
      );
      kept.rules = named.filter((r) => r.decision !== "allow");
    }
    if (config.disable?.length) {
      warn(`config ${file}: a project's policy may only tighten; ignored "policy.disable"`);
      delete kept.disable;
    }
    if (typeof config.sandbox === "object" && config.sandbox.network) {
      warn(`config ${file}: a project's policy may only tighten; the sandbox keeps no network`);
      kept.sandbox = true;
    } else if (config.sandbox === false) delete kept.sandbox;
    out.push({ config: kept, origin: file });
  }
  return out;
}

/** Checks a rule's examples; returns what failed, or undefined. */
function exampleProblem(
  policy: Policy,
  rule: Rule,
  sourceOf: (tool: string) => string | undefined,
): string | undefined {
  const literalTool = /^[a-zA-Z0-9_-]+$/.test(rule.tool) ? rule.tool : undefined;
  for (const [kind, want] of [["match", true], ["no_match", false]] as const) {
    for (const example of rule.examples?.[kind] ?? []) {
      const e = example as Record<string, unknown>;
      const explicit = Object.keys(e).length === 2 && typeof e.tool === "string" &&
        typeof e.args === "object";
      const tool = explicit ? e.tool as string : literalTool;
      if (!tool) {
        return `the rule's tool is a glob, so each example must be {"tool": NAME, "args": {…}}`;
      }
      const args = (explicit ? e.args : e) as Record<string, unknown>;
      const source = sourceOf(tool) ?? (rule.source ? [rule.source].flat()[0] : "builtin");
      const subjects = subjectsOf(policy, {
        tool,
        source,
        args,
        cwd: policy.roots[0] ?? "/",
      }, systemLookups(policy));
      const got = subjects.subjects.some((s) => ruleMatches(rule, s));
      if (got !== want) {
        return `example ${JSON.stringify(example)} ${
          want ? "does not match the rule" : "matches the rule"
        } (examples.${kind})`;
      }
    }
  }
  return undefined;
}

interface Subjects {
  subjects: Subject[];
  /**
   * Subjects that name a command's program by what it resolves to (`tools/clean` → `rm`):
   * a deny or ask rule meets them, while allow rules and "no rule" do not count.
   */
  aliases?: Set<number>;
  /** Reasons to ask whatever the rules say, per subject index (or -1 for the whole line). */
  floors: { index: number; reason: string }[];
}

/** The paths a builtin call names. */
function callPaths(facts: CallFacts): PathUse[] {
  const out: PathUse[] = [];
  const { args } = facts;
  if (typeof args.path === "string") out.push({ path: args.path, access: "read" });
  if (Array.isArray(args.paths)) {
    for (const p of args.paths) if (typeof p === "string") out.push({ path: p, access: "read" });
  }
  if (facts.tool === "grep" && out.length === 0) out.push({ path: ".", access: "read" });
  return out;
}

/** A string argument that names a path beyond the working folder: absolute, `~/`, or `..`. */
const PATH_LIKE = /^(\/|~\/|~$|\.\.(\/|$))|\/\.\.(\/|$)/;

/**
 * The paths a word of an installed tool's call may name: the word itself, what follows its
 * first `=` (`--directory=/x`, `if=/x`), what follows a single-dash option's letters
 * (`-C/x`, `-xzf/x.tar`), each item of a list in any of those (split at `,` `;` and at `:`
 * not starting a URL's `://`: `--files=a,/x`, `PATH`-like `a:/x`, `x=a:/y`, each item's own
 * `=` too), the path of a `file:` URL (`file:///x`, also after `=`, as curl, git or pandoc
 * read it), what follows a leading `@` when that file exists (`@/x`, as curl reads a file;
 * `@/components/x`, a JavaScript import alias, names none), and the strings of a word that is
 * a JSON object or list (`{"path": "/x"}`). A URL (`http://host/a`) names no local path.
 */
function pathsInWord(word: string, look: Lookups, depth = 0): string[] {
  const out = [word];
  const eq = word.indexOf("=");
  if (eq >= 0) out.push(word.slice(eq + 1));
  const attached = /^-[A-Za-z0-9]+([^A-Za-z0-9].*)$/s.exec(word);
  if (attached) out.push(attached[1]);
  for (const w of [...out]) {
    for (const item of listItems(w)) {
      if (out.includes(item)) continue;
      out.push(item);
      const at = item.indexOf("=");
      if (at >= 0) out.push(item.slice(at + 1));
    }
  }
  for (const w of [...out]) {
    const url = /^file:(?:\/\/[^/]*)?(\/.*)$/is.exec(w);
    if (url) out.push(fileUrlPath(url[1]));
    // `-d@/x`, `--data=@/x` too.
    if (w.startsWith("@") && exists(look, w.slice(1))) out.push(w.slice(1));
  }
  const found = out.filter((w) => PATH_LIKE.test(w));
  if (depth < 4 && /^\s*[[{]/.test(word)) {
    for (const s of jsonStrings(word)) found.push(...pathsInWord(s, look, depth + 1));
  }
  return found;
}

/**
 * The items of a list written in one word: split at `,` and `;`, then at each `:` that does
 * not start a URL's `://` (`a:/x` gives `/x`; `http://h:80/p` gives `http://h` and `80/p`).
 * A word with no separator gives nothing.
 */
function listItems(word: string): string[] {
  if (!/[,;:]/.test(word)) return [];
  return word.split(/[,;]/).flatMap((piece) => piece.split(/:(?!\/\/)/));
}

/** The strings inside a JSON object or list, at any depth (none when it is not JSON). */
function jsonStrings(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  const visit = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === "object" && v !== null) Object.values(v).forEach(visit);
  };
  visit(value);
  return out;
}

/** A `file:` URL's path, `%XX` decoded (undecodable: as written). */
function fileUrlPath(path: string): string {
  try {
    return decodeURIComponent(path.replace(/[?#].*$/s, ""));
  } catch {
    return path;
  }
}

function exists(look: Lookups, path: string): boolean {
  // A relative word resolves inside the working folder anyway.
  return !isAbsolute(path) || look.exists(path);
}

/**
 * The paths an installed tool's call names, for the roots check: its working folder, and
 * every string argument (in lists and objects too) that reaches beyond it, whole or inside an
 * option ({@link pathsInWord}). A tool's program can read whatever it is given, so a path
 * outside the roots is refused before it runs.
 */
function toolPaths(facts: CallFacts, look: Lookups): PathUse[] {
  const out: PathUse[] = [{ path: facts.cwd, access: "read" }];
  const visit = (value: unknown) => {
    if (typeof value === "string") {
      for (const path of pathsInWord(value, look)) out.push({ path, access: "read" });
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(visit);
  };
  Object.values(facts.args).forEach(visit);
  return out;
}

function resolvePath(
  look: Lookups,
  use: PathUse,
  cwd: string,
  home: string | undefined,
): string {
  let p = use.path;
  if (p === "~" || p.startsWith("~/")) p = (home ?? "/nonexistent-home") + p.slice(1);
  // The program opens the word as the kernel resolves it: `link/..` is the link target's parent.
  const base = use.base ? physicalWith(look, cwd, use.base) : cwd;
  return physicalWith(look, base, ownProc(p, base));
}

/** `/proc/self/cwd/…` is the folder of the process that opens it (`cwd`), not magi's own. */
function ownProc(p: string, cwd: string): string {
  const self = /^\/+proc\/+(?:self|thread-self)\/+(cwd|root)(?=\/|$)(.*)$/s.exec(p);
  return self ? (self[1] === "cwd" ? cwd : "/") + self[2] : p;
}

function allInside(
  policy: Policy,
  look: Lookups,
  uses: PathUse[],
  bases: string[],
): boolean | undefined {
  if (uses.length === 0) return undefined;
  return uses.every((u) =>
    bases.every((b) => {
      const real = resolvePath(look, u, b, policy.env.HOME);
      // `/dev/null` holds nothing and keeps nothing: `-o /dev/null` is as `> /dev/null`.
      return real === "/dev/null" || policy.roots.some((r) => isInside(real, r));
    })
  );
}

/** Splits a call into the subjects rules are matched against. */
function subjectsOf(policy: Policy, facts: CallFacts, look: Lookups): Subjects {
  const base = { tool: facts.tool, source: facts.source, args: facts.args };
  const isRun = facts.tool === "run" && facts.source === "builtin" &&
    typeof facts.args.command === "string";
  if (!isRun) {
    const paths = facts.source === "builtin" ? callPaths(facts) : toolPaths(facts, look);
    return {
      subjects: [{ ...base, inside: allInside(policy, look, paths, [facts.cwd]) }],
      floors: [],
    };
  }
  let cwd = facts.cwd;
  const extra: PathUse[] = [];
  if (typeof facts.args.cwd === "string" && facts.args.cwd !== "") {
    cwd = isAbsolute(facts.args.cwd) ? facts.args.cwd : resolve(facts.cwd, facts.args.cwd);
  }
  // The folder the line runs in is read by it (`ls` alone lists it): it must be inside too,
  // also after a `cd` the person approved has left the roots.
  extra.push({ path: cwd, access: "read" });
  const line = facts.argv ? readArgv(facts.argv) : readLine(facts.args.command as string);
  // A `cd` earlier in the line moves later commands: check relative paths from every folder
  // the line may reach, `cd`s one after another included (`cd a && cd b`: `a/b`).
  let bases = [cwd];
  for (const c of line.commands) {
    if (c.program === "cd" && c.words[0] !== undefined) {
      const to = bases.map((b) =>
        resolvePath(look, { path: c.words[0], access: "read" }, b, policy.env.HOME)
      );
      bases = [...new Set([...bases, ...to])].slice(0, 64);
    }
  }
  const floors = line.problems.map((reason) => ({ index: -1, reason }));
  // bash's `cd -` goes to $OLDPWD, and a bare folder name is looked up on $CDPATH first: both
  // come from the environment (a person's shell exports OLDPWD), not from the line.
  for (const c of line.commands) {
    if (c.program !== "cd" || !c.shell || c.words[0] === undefined) continue;
    const to = c.words[0];
    if (to === "-") floors.push({ index: -1, reason: "`cd -` goes to $OLDPWD, wherever it is" });
    else if (policy.env.CDPATH && !to.startsWith("/") && !/^\.\.?(\/|$)/.test(to)) {
      floors.push({ index: -1, reason: `\`cd ${to}\` looks the folder up on $CDPATH first` });
    }
  }
  // `run` starts the line with the `bash` its PATH finds: that must be the real one too.
  if (!facts.argv) {
    const shell = programFloor(policy, look, "bash", [cwd], facts.path);
    if (shell) floors.push({ index: -1, reason: shell });
  }
  // A wrapper starts what it wraps: `./timeout 5 ls` runs ./timeout, whatever ls may do.
  // (bash's own `command`, `builtin` and `exec` are not listed: see `Line.launchers`.)
  for (const launcher of line.launchers) {
    const floor = programFloor(policy, look, launcher, bases, facts.path);
    if (floor) floors.push({ index: -1, reason: floor });
  }
  const subjects: Subject[] = [];
  for (const c of line.commands) {
    const index = subjects.length;
    const inside = allInside(policy, look, c.paths, bases) !== false &&
      allInside(policy, look, extra, [facts.cwd]) !== false;
    subjects.push({ ...base, command: c, inside });
    const floor = commandFloor(policy, look, c, bases, facts.path, facts.argv !== undefined);
    if (floor) floors.push({ index, reason: floor });
  }
  // A program word that is a link to another program (`tools/clean` → /usr/bin/rm, `vi` →
  // vim) is that program too, for the rules that deny or ask.
  const aliases = new Set<number>();
  line.commands.forEach((c, at) => {
    if (c.program === "" || c.program === ">" || c.program === "<") return;
    for (const b of bases) {
      const real = resolveProgram(
        look,
        ownProc(c.program, b),
        b,
        facts.path ?? policy.env.PATH ?? "",
      );
      if (!real || basename(real) === basename(c.program)) continue;
      // Read again as that program (`./e rm x`, ./e → env, is `rm x` too).
      const rest = c.text.slice(shellWord(c.program).length);
      const again = c.text.startsWith(shellWord(c.program))
        ? readLine(shellWord(real) + rest).commands
        : [];
      for (const command of [{ ...c, program: real }, ...again]) {
        aliases.add(subjects.length);
        subjects.push({ ...subjects[at], command });
      }
    }
  });
  return { subjects, floors, aliases };
}

/** Why a command cannot be allowed whatever the rules say, or undefined. */
function commandFloor(
  policy: Policy,
  look: Lookups,
  c: SimpleCommand,
  bases: string[],
  path: string | undefined,
  noShell = false,
): string | undefined {
  if (c.program === "") return `\`${c.text}\`: the program is only known when bash runs it`;
  if (c.dynamic) return `\`${c.text}\`: words only known when bash runs it`;
  if (c.assigns.length > 0) return `\`${c.text}\` sets ${c.assigns.join(", ")}`;
  if (c.program === ">" || c.program === "<") return undefined;
  // A command that writes a file through an option (`time -o F`) is never read-only.
  const written = c.paths.find((p) => p.access === "write");
  if (written) return `\`${c.text}\` writes "${written.path}"`;
  // Not read-only by its program's option table (options.ts): the judge fails closed.
  if (c.optionProblem) return c.optionProblem;
  if (!noShell && c.shell && !c.program.includes("/") && SHELL_BUILTINS.has(c.program)) {
    return undefined;
  }
  return programFloor(policy, look, c.program, bases, path) ?? gitFloor(policy, look, c, bases);
}

/**
 * Why a git command cannot be allowed: git would use a bare repository inside the roots — a
 * folder a project can ship as plain files (`fixtures/x.git/config`), whose config names
 * programs git starts (`diff.external`, `core.fsmonitor`, `gpg.program`) — or a repository
 * whose config or hooks were made or changed during this session ({@link changedGitDir}). A
 * clone's own `.git` is found first and is git's, not the project's.
 */
function gitFloor(
  policy: Policy,
  look: Lookups,
  c: SimpleCommand,
  bases: string[],
): string | undefined {
  if (basename(c.program) !== "git") return undefined;
  for (const base of bases) {
    let dir = c.chdir === undefined ? lenientReal(look, base) : physicalWith(look, base, c.chdir);
    for (;;) {
      if (isDir(look, join(dir, ".git")) || isFile(look, join(dir, ".git"))) {
        const changed = changedGitDir(look, dir);
        if (changed) {
          return `\`${c.text}\`: git would run the config and hooks of the repository "${dir}", ` +
            `whose ${changed} was made or changed during this session (by a call, maybe)`;
        }
        break;
      }
      if (
        isFile(look, join(dir, "HEAD")) && isDir(look, join(dir, "objects")) &&
        isDir(look, join(dir, "refs"))
      ) {
        if (policy.roots.some((r) => isInside(dir, r))) {
          return `\`${c.text}\`: git would use the bare repository "${dir}" inside the roots, ` +
            "whose config can name programs git starts";
        }
        break;
      }
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return undefined;
}

/**
 * What of the git dir of the repository at `top` was made or changed during this session, or
 * undefined: its `config`, `config.worktree`, `hooks` or `commondir`, and those of its common
 * dir (a worktree's), by status change time. The sandbox keeps these read-only in every
 * repository that existed when a call started, so a recent one is a repository a call made
 * (`git init sub; git config core.fsmonitor …`) or pointed a `.git` file at.
 */
function changedGitDir(look: Lookups, top: string): string | undefined {
  const dotGit = join(top, ".git");
  let gitDir = dotGit;
  if (isFile(look, dotGit)) {
    const m = /^gitdir:\s*(.+)$/m.exec(look.text(dotGit) ?? "");
    if (!m) return undefined;
    gitDir = lenientReal(look, resolve(top, m[1].trim()));
  }
  // Deno gives change times in whole seconds: a change in the session's first second is
  // taken as older (no call can come that soon), so a repository made just before is not.
  const since = Math.floor(look.since() / 1000) * 1000 + 1000;
  const dirs = [gitDir];
  const common = look.text(join(gitDir, "commondir"))?.trim();
  if (common) dirs.push(lenientReal(look, resolve(gitDir, common)));
  for (const g of dirs) {
    for (const name of ["config", "config.worktree", "hooks", "commondir"]) {
      const st = look.stat(join(g, name));
      if (st && st.ctime !== null && st.ctime >= since) return join(g, name);
    }
  }
  return undefined;
}

function isDir(look: Lookups, path: string): boolean {
  return look.stat(path)?.kind === "dir";
}

function isFile(look: Lookups, path: string): boolean {
  return look.stat(path)?.kind === "file";
}

/**
 * Why a program word cannot be trusted: it must resolve to the program of that name on
 * magi's own PATH outside the roots (not a PATH entry shadowing it, not a file in the roots),
 * from every folder the line may have reached (`cd sub && bin/ls` runs `sub/bin/ls`).
 */
function programFloor(
  policy: Policy,
  look: Lookups,
  program: string,
  bases: string[],
  path: string | undefined,
): string | undefined {
  const trusted = look.trusted(basename(program))?.real;
  for (const cwd of bases) {
    const actual = program.includes("/")
      ? physicalWith(look, cwd, ownProc(program, cwd))
      : locateWith(look, program, path ?? policy.env.PATH ?? "", cwd)?.real;
    if (trusted === undefined || actual !== trusted) {
      return `\`${program}\` resolves to ${actual ? `"${actual}"` : "nothing"}, not ${
        trusted ? `"${trusted}"` : "a program on magi's own PATH outside the roots"
      }`;
    }
  }
  return undefined;
}

/**
 * The real path of the program a command word names: a word with a slash from `cwd`, a bare
 * name as the first executable on `path`; undefined when there is none.
 */
export function resolveProgram(
  look: Lookups,
  program: string,
  cwd: string,
  path: string,
): string | undefined {
  if (program.includes("/")) {
    const real = physicalWith(look, cwd, program);
    return look.stat(real)?.kind === "file" ? real : undefined;
  }
  return locateWith(look, program, path, cwd)?.real;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/**
 * The path to start a judged program at: for a bare name that is the program magi's own PATH
 * finds, the path it is found at (a symlink, maybe) — a multi-call binary such as busybox or
 * NixOS's coreutils tells its programs apart by that name — else `real`.
 *
 * @param name the program as the command named it
 * @param real its real path, as judged
 */
export function launchPath(look: Lookups, name: string, real: string): string {
  if (name.includes("/")) return real;
  const at = look.trusted(name);
  return at?.real === real ? at.found : real;
}

/**
 * Decides one call: a pure function of the call, the policy and the file-system facts. Every
 * fact it needs it asks of `look`; given `fromFacts(gathered)` it does no I/O (`facts.ts`
 * gathers them first, in `judge`).
 *
 * @returns the decision, the rule that made it and why
 * @throws MissingFact when `look` answers from facts that lack one it needs
 */
export function decide(policy: Policy, facts: CallFacts, look: Lookups): Verdict {
  const { subjects, floors, aliases } = subjectsOf(policy, facts, look);
  let best: Verdict | undefined;
  const consider = (v: Verdict) => {
    if (!best || STRICTNESS[v.decision] > STRICTNESS[best.decision]) best = v;
  };
  subjects.forEach((s, i) => {
    let verdict: Verdict | undefined;
    const alias = aliases?.has(i) ?? false;
    for (const rule of policy.rules) {
      if (alias && rule.decision === "allow") continue;
      if (!ruleMatches(rule, s)) continue;
      // On a tie the person's own rule names the verdict: the door runs what the person
      // allows in workspace-write, what only a default rule allows read-only.
      const tie = verdict && STRICTNESS[rule.decision] === STRICTNESS[verdict.decision] &&
        verdict.rule?.origin === "default" && rule.origin !== "default";
      if (!verdict || tie || STRICTNESS[rule.decision] > STRICTNESS[verdict.decision]) {
        verdict = {
          decision: rule.decision,
          rule: { id: rule.id, origin: rule.origin, decision: rule.decision },
          reason: describe(
            (rule.reason ?? "the call matches it") +
              (rule.where === "outside_roots" ? ` (roots: ${policy.roots.join(", ")})` : ""),
            s,
          ),
        };
      }
    }
    if (alias && !verdict) return;
    verdict ??= {
      decision: "ask",
      rule: null,
      reason: describe(`no rule allows it${UNTRUSTED_HINT[facts.source] ?? ""}`, s),
    };
    if (verdict.decision === "allow") {
      const floor = floors.find((f) => f.index === i);
      if (floor) verdict = { decision: "ask", rule: null, reason: floor.reason };
    }
    consider(verdict);
  });
  for (const f of floors.filter((f) => f.index === -1)) {
    consider({ decision: "ask", rule: null, reason: f.reason });
  }
  const verdict: Verdict = best ??
    { decision: "allow", rule: null, reason: "the line runs nothing" };
  const unread = unreadReason(subjects, floors);
  return unread && verdict.decision === "ask" ? { ...verdict, unread } : verdict;
}

/** Programs that run code given in their words (`python3 -c`, `eval`, `awk '…'`). */
const CODE_RUNNERS = new Set([
  "eval",
  "source",
  ".",
  "python",
  "python2",
  "python3",
  "perl",
  "ruby",
  "node",
  "deno",
  "bun",
  "php",
  "lua",
  "luajit",
  "tclsh",
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "busybox",
  "expect",
  "osascript",
]);

/** Shells: left after unwrapping `-c`, they read commands from stdin or a script file. */
const SHELL_NAMES = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
]);

/** git options whose value is a command git runs (`fetch --upload-pack`, `rebase --exec`). */
const GIT_RUNS_OPTION =
  /^(--upload-pack|--receive-pack|--exec|-x|--extcmd|--tool|--exec-path)(=|$)/;

/** git subcommands that run a command they are given. */
const GIT_RUNS_SUBCOMMAND = [
  ["submodule", "foreach"],
  ["bisect", "run"],
  ["filter-branch"],
  ["send-pack"],
  ["difftool"],
  ["mergetool"],
];

/** Why the judge cannot read what a line runs, or undefined (see {@link Verdict.unread}). */
function unreadReason(
  subjects: Subject[],
  floors: { index: number; reason: string }[],
): string | undefined {
  for (const s of subjects) {
    const c = s.command;
    if (!c) continue;
    const name = basename(c.program);
    if (c.program === "" || c.dynamic) return `\`${c.text}\`: words only known when bash runs it`;
    if (CODE_RUNNERS.has(name)) return `\`${c.text}\` runs code the judge does not read`;
    // A shell left after unwrapping `-c` with no script file reads its commands from stdin
    // (`sh <<<'…'`, `echo … | bash`). A script file it is given is the project's code, as
    // `make` or `npm test` are: the sandbox holds it, not the judge.
    if (SHELL_NAMES.has(name) && (c.words.length === 0 || c.flags.includes("-s"))) {
      return `\`${c.text}\` runs commands it reads from stdin`;
    }
    if (name === "git") {
      if (c.optionProblem) return c.optionProblem;
      const words = [...c.flags, ...c.words];
      const runs = words.find((w) => GIT_RUNS_OPTION.test(w)) ??
        GIT_RUNS_SUBCOMMAND.find((sub) => sub.every((w) => c.words.includes(w)))?.join(" ");
      if (runs) return `\`${c.text}\`: git's \`${runs}\` runs a command the judge does not read`;
    }
  }
  const made = floors.find((f) => /during this session/.test(f.reason));
  if (made) return made.reason;
  return floors.find((f) => f.index === -1 && /parse|function/.test(f.reason))?.reason;
}

/** Why a tool of these sources is asked about, and how to allow it. */
const UNTRUSTED_HINT: Record<string, string> = {
  peer: " (a peer's tools are asked about unless a rule allows them, " +
    'such as {"tool": "NAME", "source": "peer", "decision": "allow"})',
  mcp: " (an MCP server's tools are asked about unless a rule allows them, " +
    'such as {"tool": "SERVER__*", "source": "mcp", "decision": "allow"})',
  project: " (Lua from a project's .magi/tools came with the repository: it is asked about " +
    'unless your own config allows it, such as {"tool": "NAME", "source": "project", ' +
    '"decision": "allow"})',
};

function describe(reason: string, s: Subject): string {
  return s.command ? `${reason}: \`${s.command.text}\`` : reason;
}

/** One line for a person or a model, such as `deny by rule "outside-roots" (default): …`. */
export function verdictLine(v: Verdict): string {
  const by = v.rule ? `rule "${v.rule.id}" (${v.rule.origin})` : "no rule";
  return `${v.decision} by ${by}: ${v.reason}`;
}

/**
 * The real paths of the programs the policy lets `run` start without asking: the program
 * word of each `allow` rule's command patterns, found as {@link decide} trusts it (on magi's
 * own PATH, outside the roots; an absolute program word when it is that same program), and
 * for a bare name also the path it is found at ({@link launchPath}). This is the Deno `run`
 * permission of in-process bodies and Lua Workers.
 */
export function allowedPrograms(policy: Policy, look: Lookups = systemLookups(policy)): string[] {
  const out = new Set<string>();
  for (const rule of policy.rules) {
    if (rule.decision !== "allow" || !rule.commands || !rule.matchTool("run")) continue;
    for (const p of rule.commands) {
      const name = p.source.trim().split(/\s+/)[0];
      // A shell builtin's name (`echo`) still allows the program of that name (`/usr/bin/echo`)
      // to a body that starts programs without a shell.
      if (/[*?[]/.test(name)) continue;
      if (name.includes("/")) {
        // An absolute program (`/usr/bin/sort *`) is allowed only as the one magi's PATH finds.
        const real = isAbsolute(name) ? look.trusted(basename(name))?.real : undefined;
        if (real && lenientReal(look, name) === real) out.add(real);
        continue;
      }
      const at = look.trusted(name);
      // Both paths: a program is started where PATH finds it (see launchPath).
      if (at) out.add(at.real).add(at.found);
    }
  }
  return [...out].sort();
}

/** The user's own config file (`$XDG_CONFIG_HOME/magi/config.jsonc`), as `loadConfig` finds it. */
export { userConfigFile } from "../core/xdg.ts";
