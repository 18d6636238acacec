/**
 * The programs a git config names (SPEC S8.3): keys whose value git runs — a shell line
 * (`core.fsmonitor`, `core.sshCommand`, `alias.x = !…`, a filter's `clean`), or a program's path
 * (`gpg.program`, `difftool.<tool>.path`). A sandboxed call must not be able to change, or make,
 * a file such a key names inside a root: git runs it later, outside any sandbox, when the person
 * runs `git status`, `git commit` or `git log`.
 *
 * A config file's entries are read by git itself (`git config --file F --no-includes --list
 * -z`, which reads that one file and runs nothing, from `/` with no system or global config), so
 * continuation lines, quoting and escapes are read as git reads them; when no git is found in
 * the system's folders, or git refuses the file, by magi's own reading (`gitEntriesOf`'s
 * fallback). Each file's entries are kept while its identity and times are unchanged.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";

/** How a key's value names what git runs. */
export type ProgramKind =
  /** A shell line (`sh -c`): every word that is a path. */
  | "shell"
  /** A shell line only when it starts with `!` (an alias, a submodule's `update`). */
  | "bang"
  /** A shell line unless it is a boolean (`core.fsmonitor = true` is git's own daemon). */
  | "shell-or-bool"
  /** A credential helper: `!…` a shell line, an absolute path a program, else `git credential-…`. */
  | "helper"
  /** The whole value is one program's path (run without a shell). */
  | "path";

/**
 * The keys whose values git runs, as data (git-config(1), gitattributes(5), gitcredentials(7)),
 * matched case-insensitively against the whole key (`<section>.<subsection>.<name>`).
 */
export const PROGRAM_KEYS: readonly { key: RegExp; kind: ProgramKind }[] = [
  { key: /^core\.fsmonitor$/i, kind: "shell-or-bool" },
  { key: /^core\.sshcommand$/i, kind: "shell" },
  { key: /^core\.editor$/i, kind: "shell" },
  { key: /^core\.pager$/i, kind: "shell" },
  { key: /^core\.askpass$/i, kind: "shell" },
  { key: /^core\.gitproxy$/i, kind: "shell" },
  { key: /^sequence\.editor$/i, kind: "shell" },
  { key: /^gpg\.program$/i, kind: "path" },
  { key: /^gpg\.[^.]+\.program$/i, kind: "path" },
  { key: /^gpg\.ssh\.defaultkeycommand$/i, kind: "shell" },
  { key: /^credential\.helper$/i, kind: "helper" },
  { key: /^credential\..+\.helper$/i, kind: "helper" },
  { key: /^filter\..+\.(clean|smudge|process)$/i, kind: "shell" },
  { key: /^diff\..+\.(textconv|command)$/i, kind: "shell" },
  { key: /^diff\.external$/i, kind: "shell" },
  { key: /^merge\..+\.driver$/i, kind: "shell" },
  { key: /^(diff|merge)tool\..+\.cmd$/i, kind: "shell" },
  { key: /^(diff|merge)tool\..+\.path$/i, kind: "path" },
  { key: /^alias\..+$/i, kind: "bang" },
  { key: /^uploadpack\.packobjectshook$/i, kind: "shell" },
  { key: /^pager\..+$/i, kind: "shell-or-bool" },
  { key: /^interactive\.difffilter$/i, kind: "shell" },
  { key: /^submodule\..+\.update$/i, kind: "bang" },
  { key: /^remote\..+\.(uploadpack|receivepack)$/i, kind: "shell" },
  { key: /^sendemail\.(sendmailcmd|smtpserver)$/i, kind: "shell" },
  { key: /^sendemail\..+\.(sendmailcmd|smtpserver)$/i, kind: "shell" },
  { key: /^trailer\..+\.(command|cmd)$/i, kind: "shell" },
  { key: /^tar\..+\.command$/i, kind: "shell" },
  { key: /^(web\.browser|browser\..+\.cmd)$/i, kind: "shell" },
  { key: /^browser\..+\.path$/i, kind: "path" },
  { key: /^man\..+\.cmd$/i, kind: "shell" },
  { key: /^man\..+\.path$/i, kind: "path" },
  { key: /^hook\..+\.command$/i, kind: "shell" },
];

/** One entry of a config file: its key as git prints it, and its value (none: a bare key). */
export interface GitEntry {
  key: string;
  value: string | undefined;
}

/** The kind of a key git runs the value of, or undefined. */
export function programKind(key: string): ProgramKind | undefined {
  return PROGRAM_KEYS.find((k) => k.key.test(key))?.kind;
}

const BOOLEAN = /^(true|false|yes|no|on|off|1|0|)$/i;

/**
 * The paths a program-valued entry names, absolute (missing ones too): for a shell line each
 * word with a slash (`./x`, `tools/fsmon.sh`, `~/bin/p`, `$HOME/p`), and each word naming an
 * existing file from one of `tops` (`node fix.js`); for a program's path the value itself. A
 * relative path is taken from each of `tops` (git runs these from the worktree's top); with no
 * `tops`, only absolute and `~/` paths count.
 *
 * @param home HOME, for `~/` and `$HOME`
 */
export function programPaths(
  entry: GitEntry,
  home: string,
  tops: readonly string[],
): string[] {
  const kind = programKind(entry.key);
  const value = entry.value?.trim();
  if (!kind || !value) return [];
  let line: string | undefined;
  let whole: string | undefined;
  switch (kind) {
    case "shell":
      line = value;
      break;
    case "bang":
      if (value.startsWith("!")) line = value.slice(1);
      break;
    case "shell-or-bool":
      if (!BOOLEAN.test(value)) line = value;
      break;
    case "helper":
      if (value.startsWith("!")) line = value.slice(1);
      else if (isAbsolute(value) || value.startsWith("~/")) line = value;
      break;
    case "path":
      whole = value;
  }
  const words = whole !== undefined ? [whole] : line !== undefined ? shellWords(line) : [];
  const out = new Set<string>();
  for (const raw of words) {
    const w = raw.replace(/^(\$HOME|\$\{HOME\})(?=\/)/, "~");
    if (w.startsWith("~/")) {
      if (home) out.add(join(home, w.slice(2)));
    } else if (isAbsolute(w)) out.add(resolve(w));
    else if (w.includes("/") || whole !== undefined) {
      for (const t of tops) out.add(resolve(t, w));
    } else {
      for (const t of tops) if (isFile(resolve(t, w))) out.add(resolve(t, w));
    }
  }
  return [...out];
}

/** A shell line's words, quotes taken off, split at blanks and operators (a reading, no more). */
function shellWords(line: string): string[] {
  const out: string[] = [];
  let word = "";
  let quote = "";
  const flush = () => {
    if (word) out.push(word);
    word = "";
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = "";
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "\\" && i + 1 < line.length) word += line[++i];
    else if (/[\s;|&()<>`=]/.test(c)) flush();
    else word += c;
  }
  flush();
  return out;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Each config file's entries, with the identity and times they were read at. */
const entriesKept = new Map<string, { stamp: string; entries: GitEntry[] }>();

/**
 * The entries of one config file (no includes followed), as git reads them; [] when it cannot
 * be read. Kept per file while its identity, size and times are unchanged (one `stat`).
 *
 * @param at the file's real path
 */
export function gitEntriesOf(at: string): GitEntry[] {
  let stamp: string;
  try {
    const st = Deno.statSync(at);
    if (!st.isFile) return [];
    stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  } catch {
    return [];
  }
  const kept = entriesKept.get(at);
  if (kept && kept.stamp === stamp) return kept.entries;
  const entries = byGit(at) ?? byMagi(at);
  entriesKept.set(at, { stamp, entries });
  if (entriesKept.size > 512) entriesKept.delete(entriesKept.keys().next().value!);
  return entries;
}

/** Where git is looked for: the system's folders only (a root's `node_modules/.bin/git` is not). */
const GIT_AT = ["/usr/bin/git", "/bin/git", "/usr/local/bin/git"];
let gitFound: string | null | undefined;

function systemGit(): string | undefined {
  if (gitFound === undefined) gitFound = GIT_AT.find(isFile) ?? null;
  return gitFound ?? undefined;
}

/**
 * git's own reading of one file: from `/`, no repository found (`GIT_CEILING_DIRECTORIES`), no
 * system or global config, a clean environment. `git config --file` runs nothing.
 */
function byGit(at: string): GitEntry[] | undefined {
  const git = systemGit();
  if (!git) return undefined;
  try {
    const out = new Deno.Command(git, {
      args: ["config", "--file", at, "--no-includes", "--list", "-z"],
      cwd: "/",
      clearEnv: true,
      env: {
        PATH: "/usr/bin:/bin",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CEILING_DIRECTORIES: "/",
        HOME: "/nonexistent",
        LC_ALL: "C",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!out.success) return undefined;
    const entries: GitEntry[] = [];
    for (const record of new TextDecoder().decode(out.stdout).split("\0")) {
      if (!record) continue;
      const nl = record.indexOf("\n");
      entries.push(
        nl < 0
          ? { key: record, value: undefined }
          : { key: record.slice(0, nl), value: record.slice(nl + 1) },
      );
    }
    return entries;
  } catch {
    return undefined;
  }
}

/**
 * magi's own reading, where git is missing or refuses the file: sections and subsections,
 * `key = value` lines, quotes, escapes, comments and continuation lines (`\` at a line's end).
 */
function byMagi(at: string): GitEntry[] {
  let body: string;
  try {
    body = Deno.readTextFileSync(at);
  } catch {
    return [];
  }
  const out: GitEntry[] = [];
  let section = "";
  const lines = body.replace(/\\\r?\n/g, "").split("\n");
  for (const raw of lines) {
    const head = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(raw);
    const rest = head ? raw.slice(head[0].length) : raw;
    if (head) {
      section = head[1].toLowerCase() + (head[2] !== undefined ? `.${head[2]}` : "");
    }
    const kv = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(rest);
    if (!kv || !section) continue;
    out.push({
      key: `${section}.${kv[1].toLowerCase()}`,
      value: kv[2] === undefined ? undefined : unquote(kv[2]),
    });
  }
  return out;
}

/** A git config value: quotes and escapes taken off, a comment after it left out. */
function unquote(raw: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === "\\" && i + 1 < raw.length) {
      const n = raw[++i];
      out += n === "n" ? "\n" : n === "t" ? "\t" : n;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === "#" || c === ";")) break;
    else out += c;
  }
  return out.trim();
}

/** The folder a missing path would be made in first: its nearest missing ancestor's. */
export function firstMissing(path: string): string {
  let p = path;
  while (dirname(p) !== p) {
    try {
      Deno.lstatSync(dirname(p));
      return p;
    } catch {
      p = dirname(p);
    }
  }
  return p;
}
