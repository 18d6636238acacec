/**
 * What no call writes, whatever the policy allows: what the person's own git, shell or magi
 * would later run outside any sandbox. The sandbox mounts these read-only (`sandbox_paths.ts`);
 * the file builtins, which write outside the sandbox, refuse them by the same list.
 *
 * - in any repository: `.git/config`, `.git/config.worktree`, `.git/hooks/…`, `.git/commondir`
 *   and a worktree's `.git` file; and the same in every folder git takes for a git dir (a
 *   bare repository, `.git/worktrees/X`, `.git/modules/X`): `config`, `config.worktree`,
 *   `commondir`, `gitdir` (and their `.lock`), `hooks/…`;
 * - a project's `.magi/` (its config and its Lua tools);
 * - magi's own config, state and cache folders (`$XDG_CONFIG_HOME/magi`, …);
 * - HOME's start-up files (`.bashrc`, `.profile`, `.gitconfig`, …) and every hidden entry at
 *   HOME's top level (`.config`, `.local`, `.deno`, …) unless a root lies inside it;
 * - what magi runs later outside any sandbox (`runs_later.ts`): its code, Deno, hooks', MCP
 *   servers' and peers' programs, `tools_dir` and `lua_dirs` folders, PATH folders outside a
 *   project's own tree, `$XDG_CONFIG_HOME`'s start-up parts;
 * - what a repository's git config includes or takes its hooks from (`include.path`,
 *   `includeIf`, `core.hooksPath`), and where HOME's start-up files lead (symlink targets, the
 *   includes of `~/.gitconfig`).
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import {
  gitConfigReach,
  HOME_STARTUP,
  homeDotEntry,
  passwdHome,
  startupReach,
  within,
} from "../confinement/sandbox_paths.ts";
import { magiDir } from "../core/xdg.ts";

/**
 * magi's own folders: config, state (sessions, spills, the MCP token) and cache (the tool
 * links, discovery), from the environment's XDG variables or HOME.
 */
export function magiOwnDirs(env: Record<string, string | undefined>): string[] {
  return (["config", "state", "cache"] as const).map((kind) => magiDir(env, kind))
    .filter((d): d is string => d !== undefined);
}

/**
 * Why a write to `real` (a real absolute path) is refused, or undefined when it is not.
 *
 * @param later what magi runs later outside any sandbox (`runs_later.ts`), real paths
 * @param roots the roots the write is allowed by: HOME's hidden entries are refused when only a
 *   root holding HOME allows it, not a root inside one of them (as the sandbox binds them)
 */
export function protectedWrite(
  real: string,
  env: Record<string, string | undefined>,
  later: readonly string[] = [],
  roots: readonly string[] = [],
): string | undefined {
  const parts = real.split("/");
  for (let i = 0; i < parts.length; i++) {
    const next = parts[i + 1];
    if (parts[i] === ".git") {
      if (next === undefined) return "a repository's .git";
      if (/^(config|config\.worktree|commondir)(\.lock)?$/.test(next) && i + 2 === parts.length) {
        return `a repository's .git/${next}`;
      }
      if (next === "hooks") return "a repository's .git/hooks";
    }
    if (parts[i] === ".magi") return "a project's .magi folder";
  }
  // Any folder git treats as a git dir — a bare repository, a worktree's or a submodule's
  // (`.git/worktrees/X`, `.git/modules/X`), a separate git dir — whatever its name.
  for (let i = parts.length - 1; i > 0; i--) {
    const dir = parts.slice(0, i).join("/") || "/";
    if (!isGitDir(dir)) continue;
    const rest = parts.slice(i);
    if (rest.includes("hooks")) return `the hooks of the git dir ${dir}`;
    const last = rest[rest.length - 1];
    if (/^(config|config\.worktree|commondir|gitdir)(\.lock)?$/.test(last)) {
      return `the git dir ${dir}'s ${last}`;
    }
  }
  const own = magiOwnDirs(env).find((d) => within(real, d) || within(real, realOr(d)));
  if (own) return `magi's own folder ${own}`;
  const ran = later.find((p) => within(real, p));
  if (ran) return `what magi runs later (${ran})`;
  // HOME unset (cron, `env -i`): the passwd home stands for it, as in the sandbox.
  const homeVar = env.HOME ?? passwdHome();
  const home = homeVar && realOr(homeVar);
  if (home && HOME_STARTUP.some((rel) => within(real, join(home, rel)))) {
    return "a start-up file in HOME";
  }
  const reached = home ? startupReach(home, realOrUndefined).find((p) => within(real, p)) : "";
  if (reached) return `what HOME's start-up files lead to (${reached})`;
  const included = gitReach(real, home || "");
  if (included) return included;
  const dot = home ? homeDotEntry(real, home) : undefined;
  if (dot && !roots.some((r) => within(real, r) && within(r, dot) && r !== dot)) {
    return `HOME's hidden entry ${dot} (start-up files and tools' settings)`;
  }
  return undefined;
}

/**
 * Why `real` is what a repository's git config above it includes or takes its hooks from
 * (`include.path`, `includeIf`, `core.hooksPath`: `gitConfigReach`), or undefined.
 */
function gitReach(real: string, home: string): string | undefined {
  for (let top = dirname(real);; top = dirname(top)) {
    for (const g of gitDirsOf(top)) {
      for (const name of ["config", "config.worktree"]) {
        const file = join(g, name);
        const hit = gitConfigReach(file, home, [top, g], realOrUndefined)
          .find((p) => within(real, p));
        if (hit) return `what the git config ${file} includes or runs (${hit})`;
      }
    }
    if (dirname(top) === top) return undefined;
  }
}

/** The git dirs of a folder: its `.git` (a folder, or the one a `.git` file names), or itself when bare, and their common dirs. */
function gitDirsOf(top: string): string[] {
  const out: string[] = [];
  const dotGit = join(top, ".git");
  try {
    const st = Deno.statSync(dotGit);
    if (st.isDirectory) out.push(realOr(dotGit));
    else {
      const m = /^gitdir:\s*(.+)$/m.exec(Deno.readTextFileSync(dotGit));
      if (m) out.push(resolve(top, m[1].trim()));
    }
  } catch {
    // no .git here
  }
  if (isGitDir(top)) out.push(top);
  for (const g of [...out]) {
    try {
      const common = Deno.readTextFileSync(join(g, "commondir")).trim();
      if (common) out.push(resolve(g, common));
    } catch {
      // none
    }
  }
  return out;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** Whether git would take `dir` for a git dir: a `HEAD` and `objects/`, or a `commondir`. */
function isGitDir(dir: string): boolean {
  try {
    if (!Deno.statSync(join(dir, "HEAD")).isFile) return false;
  } catch {
    return false;
  }
  for (const mark of ["objects", "commondir"]) {
    try {
      Deno.statSync(join(dir, mark));
      return true;
    } catch {
      // not this one
    }
  }
  return false;
}
