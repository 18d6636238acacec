/**
 * What magi itself runs later, outside any sandbox, and so what no sandboxed program and no
 * `write` or `edit` may change (SPEC S8.3): magi's own code (the folder holding `main.ts`,
 * `lib/`, `deno.json`, `node_modules`), the Deno running it and Deno's cache, and the files
 * the configured hooks, MCP servers and peers name on their command lines (a hook's script, a
 * server's program or script), the folders magi reads tools from at start (`tools_dir`, whose
 * programs' `--help` discovery runs unsandboxed; `lua_dirs`, whose Lua runs in magi's Workers),
 * and the PATH folders a root holds outside its own project (`~/go/bin` with HOME a root: magi
 * looks the default peer `casper` up there at every start, the person's shell everything),
 * wherever a root holds them.
 *
 * @module
 */
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readLine } from "./shell.ts";
import { xdgBase } from "../core/xdg.ts";

/** A configured program: a hook's shell line, or an MCP server's command and arguments. */
export type LaterProgram =
  | { line: string; cwd: string }
  | { argv: readonly string[]; cwd: string };

/**
 * The real paths of the files and folders magi runs later: its code, Deno's executable's
 * folder and cache, and the files the programs name (see {@link namedFiles}).
 *
 * @param env magi's environment (HOME, DENO_DIR, XDG_CACHE_HOME, PATH)
 */
export function runsLater(
  env: Record<string, string | undefined>,
  programs: readonly LaterProgram[],
  folders: readonly string[] = [],
): string[] {
  const out = new Set<string>();
  const add = (p: string | undefined) => {
    const r = p && realOrUndefined(p);
    if (r) out.add(r);
  };
  add(fileURLToPath(new URL("../..", import.meta.url)));
  add(dirname(Deno.execPath()));
  const cache = xdgBase(env, "cache");
  add(env.DENO_DIR ?? (cache ? join(cache, "deno") : undefined));
  for (const p of programs) for (const f of namedFiles(p, env)) out.add(f);
  for (const f of folders) add(f);
  return [...out];
}

/** How deep {@link linkTargets} looks: a tools_dir's entries and each tool folder's. */
const LINK_DEPTH = 2;

/**
 * Where the symlinks in a tools folder lead, as real paths: a tool kept in the project and
 * linked in (`tools/x/x -> ../../scripts/x.sh`, a whole tool folder `tools/x -> ../pkg/x`) is
 * run by discovery as the folder's own programs are, so its target is kept read-only too. Looks
 * at the folder's entries and theirs ({@link LINK_DEPTH}); a link to nowhere is left out.
 */
export function linkTargets(folder: string): string[] {
  const out = new Set<string>();
  const walk = (dir: string, depth: number) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isSymlink) {
        const real = realOrUndefined(path);
        if (real) out.add(real);
      }
      if (depth > 1 && (e.isDirectory || e.isSymlink)) walk(path, depth - 1);
    }
  };
  walk(folder, LINK_DEPTH);
  return [...out];
}

/**
 * The folders of PATH that run later and that no sandboxed program may fill: each absolute
 * entry, as a real path, but those inside a root's own project tree (`./node_modules/.bin`,
 * which `npm install` must write). A root that is HOME or holds it is no project tree for
 * HOME's entries: `~/go/bin`, `~/.cargo/bin`, `~/Applications` stay (a root inside HOME, say
 * `~/proj`, keeps its own `bin/`). Entries in no writable folder are harmless and filtered by
 * the sandbox; missing ones are left out.
 *
 * @param roots real absolute roots
 * @param home HOME's real path ("" when unknown)
 */
export function pathFolders(
  env: Record<string, string | undefined>,
  roots: readonly string[],
  home: string,
): string[] {
  const out = new Set<string>();
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const real = realOrUndefined(dir);
    if (!real) continue;
    const project = roots.some((r) => inside(real, r) && !(home && inside(home, r)) && r !== real);
    if (!project) out.add(real);
  }
  return [...out];
}

/**
 * What runs later from the XDG config folder: git's, fish's, systemd's, the desktop's
 * (`autostart`, `environment.d`) and direnv's (`direnvrc`, sourced before every `.envrc`).
 */
const XDG_CONFIG_STARTUP = ["git", "fish", "systemd", "autostart", "environment.d", "direnv"];
/** And from the XDG data folder: systemd's user units, desktop entries, fish's vendor files. */
const XDG_DATA_STARTUP = ["systemd", "applications", "fish"];

/**
 * The XDG config folder (`XDG_CONFIG_HOME`, when set: under HOME it is HOME's hidden entry
 * already) whole, and the parts of it and of `XDG_DATA_HOME` that other programs run from
 * (git's config, fish, systemd user units, autostart), as real paths of those that exist. A
 * root inside the config folder leaves it out whole (facts.ts), its parts still kept.
 */
export function xdgStartup(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    const r = realOrUndefined(p);
    if (r) out.push(r);
  };
  const config = env.XDG_CONFIG_HOME;
  if (config && isAbsolute(config)) {
    add(config);
    for (const sub of XDG_CONFIG_STARTUP) add(join(config, sub));
  }
  const data = env.XDG_DATA_HOME;
  if (data && isAbsolute(data)) { for (const sub of XDG_DATA_STARTUP) add(join(data, sub)); }
  return out;
}

/**
 * The start-up parts of the XDG config and data folders ({@link xdgStartup}) that do not exist
 * yet where their folder does: a program could make `autostart/x.desktop` in a root that is
 * the config folder itself, so each is made empty and read-only for the call (`laterMissing`).
 */
export function xdgStartupMissing(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  const parts: [string | undefined, string[]][] = [
    [env.XDG_CONFIG_HOME, XDG_CONFIG_STARTUP],
    [env.XDG_DATA_HOME, XDG_DATA_STARTUP],
  ];
  for (const [base, subs] of parts) {
    if (!base || !isAbsolute(base)) continue;
    const real = realOrUndefined(base);
    if (!real) continue;
    for (const sub of subs) {
      try {
        Deno.lstatSync(join(real, sub));
      } catch {
        out.push(join(real, sub));
      }
    }
  }
  return out;
}

/**
 * Start-up files the environment moves out of HOME, which the person's programs run or read
 * later (git's global and system config, zsh's `ZDOTDIR`, `BASH_ENV` and `ENV` of every
 * non-interactive shell, Python's `PYTHONSTARTUP`, readline's `INPUTRC`): the variable, and
 * whether it names a file or a folder whose start-up files are read (`ZDOTDIR`: kept whole).
 */
const RELOCATED_STARTUP: readonly { name: string; list?: boolean }[] = [
  { name: "GIT_CONFIG_GLOBAL" },
  { name: "GIT_CONFIG_SYSTEM" },
  { name: "GIT_CONFIG" },
  { name: "ZDOTDIR" },
  { name: "BASH_ENV" },
  { name: "ENV" },
  { name: "PYTHONSTARTUP" },
  { name: "INPUTRC" },
  { name: "IPYTHONDIR" },
];

/**
 * The start-up files and folders that variables of magi's environment move out of HOME
 * ({@link RELOCATED_STARTUP}), as real paths of those that exist (`GIT_CONFIG_GLOBAL=
 * ~/dotfiles/gitconfig`, `ZDOTDIR=~/.config/zsh`): kept read-only as HOME's own are.
 */
export function relocatedStartup(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const { name } of RELOCATED_STARTUP) {
    const value = env[name];
    if (!value || !isAbsolute(value)) continue;
    const real = realOrUndefined(value);
    if (real) out.push(real);
  }
  return out;
}

/**
 * What a trusted project (config `trusted_projects`) runs from: its `.magi` (a config that may
 * name hooks, tools and MCP servers) and its repository's `.git/config` and `.git/hooks` —
 * wherever a root holds the project, however deep. Those that exist (`present`), and a
 * missing `.magi` where the project exists (`missing`: made empty and read-only).
 *
 * @param projects the folders, absolute
 */
export function trustedProjectFiles(
  projects: readonly string[],
): { present: string[]; missing: string[] } {
  const present: string[] = [];
  const missing: string[] = [];
  for (const p of projects) {
    const project = isAbsolute(p) ? realOrUndefined(p) : undefined;
    if (!project) continue;
    for (const rel of [".magi", ".git/config", ".git/hooks"]) {
      const real = realOrUndefined(join(project, rel));
      if (real) present.push(real);
      else if (rel === ".magi") missing.push(join(project, rel));
    }
  }
  return { present, missing };
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/**
 * The existing regular files a program's command line names: its program (looked up on PATH
 * when it has no slash) and every word that is a file from its folder (`sh scripts/hook.sh`,
 * `node ./server.js`), as real paths. A folder named is not taken (a root on a command line
 * would make the whole root read-only).
 */
export function namedFiles(
  program: LaterProgram,
  env: Record<string, string | undefined>,
): string[] {
  const words: string[] = [];
  if ("argv" in program) words.push(...program.argv);
  else {
    try {
      const line = readLine(program.line);
      for (const c of line.commands) {
        words.push(c.program, ...c.words, ...c.paths.map((p) => p.path));
      }
      words.push(...line.launchers);
    } catch {
      // Not a line magi can read: its words as written.
      words.push(...program.line.split(/\s+/));
    }
  }
  const out = new Set<string>();
  for (const w of words) {
    if (!w) continue;
    const home = env.HOME;
    const expanded = w.startsWith("~/") && home ? join(home, w.slice(2)) : w;
    const candidates = [resolve(program.cwd, expanded)];
    if (!expanded.includes("/")) {
      for (const dir of (env.PATH ?? "").split(delimiter)) {
        if (isAbsolute(dir)) candidates.push(join(dir, expanded));
      }
    }
    for (const c of candidates) {
      const real = realOrUndefined(c);
      if (!real) continue;
      try {
        if (Deno.statSync(real).isFile) {
          out.add(real);
          break;
        }
      } catch {
        // gone
      }
    }
  }
  return [...out];
}

function realOrUndefined(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}
