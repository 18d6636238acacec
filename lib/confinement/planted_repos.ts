/**
 * Repositories a call planted in the roots (SPEC S8.3): after a call that could write the roots
 * (`workspace-write`, `write`, `edit`), what git would run from a repository whose git files
 * the call made or changed is disarmed — renamed aside (`config` → `config.magi-disarmed`), so
 * the person's next `git status` there (or in the repository above, for a submodule: git runs
 * git in each one) runs nothing the call left.
 *
 * The sandbox keeps the git files of the repositories it finds at a call's start read-only (a
 * walk of 200 folders, two levels down). A repository deeper than that, one the call makes
 * (`git init sub`, `git clone`, a gitlink `git add`ed to the index), or a `.git` file pointing
 * at a git dir in the temp folder, it cannot cover: bwrap cannot cover paths that do not exist
 * yet. So after the call every folder of the roots is looked at (one `stat` each while
 * unchanged: the cached listings of `sandbox_paths.ts`), and for each repository found, and each
 * gitlink of an index the call changed (`node_modules/x`, where the walk does not go), the
 * change times of its `.git` file, `config`, `config.worktree`, `commondir` and hooks are
 * compared with the call's start (change times cannot be set back). What changed and would run
 * a program — a config with a key of {@link PROGRAM_KEYS} that runs one, an include or
 * `core.hooksPath`; a hook that is not a `.sample`; a `commondir` outside a worktree's git dir —
 * is renamed aside. A plain `git init` or `git clone` the call made (template hooks are
 * `.sample` files, a clone's config names no program) is left as it is.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { folderListing, within } from "./sandbox_paths.ts";
import { gitEntriesOf, programKind } from "./git_programs.ts";
import { gitlinksOf } from "./git_index.ts";

export { gitlinksOf };

/** One thing renamed aside, and why. */
export interface Disarmed {
  path: string;
  movedTo: string;
  why: string;
}

/** The most folders one look after a call reads; past it the rest is not looked at (said). */
const FOLDER_BUDGET = 50_000;

/** The suffix of what is renamed aside. */
export const DISARMED = ".magi-disarmed";

/** What one look after a call found and did. */
export interface PlantedLook {
  disarmed: Disarmed[];
  /** Folders looked at, and whether the budget stopped the look before the end. */
  folders: number;
  cut: boolean;
}

/** The repositories in the roots before a call, and what git would run from each then. */
export interface Before {
  /** Each repository's top → the identity of its `.git` (or a bare one's `HEAD`). */
  tops: Map<string, string>;
  /** Their git files (`.git`, `config`, `config.worktree`, `commondir`, hooks) → content. */
  items: Map<string, string>;
}

/** The repositories last seen in each set of roots (the look after a call sees them all). */
const lastSeen = new Map<string, Map<string, string>>();

/**
 * The repositories in the roots before a call (and the submodules their indexes name) — what
 * the look after the last call saw, or, for the first, a look now — and the content, now, of
 * the files git runs from each. A repository the call makes or swaps in is told from one the
 * person had, and a change the call makes in one from what the person left.
 */
export function lookBefore(roots: readonly string[], skip: Skip = () => false): Before {
  const key = JSON.stringify(roots);
  let tops = lastSeen.get(key);
  if (!tops) {
    tops = seenTops(walk(roots, skip).found);
    lastSeen.set(key, tops);
  }
  const items = new Map<string, string>();
  for (const top of tops.keys()) {
    items.set(join(top, ".git"), contentOf(join(top, ".git")));
    for (const g of plainGitDirs(top)) capture(g, items, 0);
  }
  return { tops, items };
}

/** Notes the content of what git dir `g` runs from (and its common dir's). */
function capture(g: string, items: Map<string, string>, depth: number): void {
  if (depth > 2 || items.has(join(g, "config"))) return;
  for (const name of ["config", "config.worktree", "commondir"]) {
    items.set(join(g, name), contentOf(join(g, name)));
  }
  for (const hook of hooksIn(join(g, "hooks"))) items.set(hook, contentOf(hook));
  const common = items.get(join(g, "commondir"));
  if (common?.startsWith("file:")) capture(resolve(g, common.slice(5).trim()), items, depth + 1);
}

/** What a path is, to tell a change: its text (a file), its target (a link), "" when missing. */
function contentOf(path: string): string {
  try {
    const st = Deno.lstatSync(path);
    if (st.isSymlink) return `link:${Deno.readLinkSync(path)}`;
    if (st.isDirectory) return `dir:${st.dev}:${st.ino}`;
    if (st.size > 1024 * 1024) return `big:${st.ino}:${st.size}:${st.mtime?.getTime()}`;
    return `file:${Deno.readTextFileSync(path)}`;
  } catch {
    return "";
  }
}

/** The tops found and the submodules their indexes name, each with its signature. */
function seenTops(found: ReadonlySet<string>): Map<string, string> {
  const tops = new Map<string, string>();
  for (const top of found) tops.set(top, signature(top));
  for (const top of found) {
    for (const g of plainGitDirs(top)) {
      for (const p of gitlinksCached(g)) {
        const sub = join(top, p);
        if (!tops.has(sub)) tops.set(sub, signature(sub));
      }
    }
  }
  return tops;
}

/**
 * Looks for repositories made or changed during a call in the roots and disarms what they
 * would run: one the call made (not seen before, or its `.git` swapped, and its folder or
 * `.git` changed since `since`) whole; one seen before in what differs from `before`; one the
 * person made between two calls in what changed since `since`.
 *
 * @param roots real absolute folders the call could write (the system temp folder left out)
 * @param since when the call started (ms since the epoch)
 */
export function disarmPlanted(
  roots: readonly string[],
  since: number,
  before: Before,
  skip: Skip = () => false,
): PlantedLook {
  // Change times are whole seconds: anything changed in the second the call started counts.
  const from = Math.floor(since / 1000) * 1000;
  const changedSince = (p: string) => {
    try {
      return (Deno.lstatSync(p).ctime?.getTime() ?? Infinity) >= from;
    } catch {
      return false;
    }
  };
  // A file of a repository seen before: changed when its content is not what it was.
  const differs = (p: string) => {
    const was = before.items.get(p);
    return was === undefined ? contentOf(p) !== "" : contentOf(p) !== was;
  };
  const out: Disarmed[] = [];
  const seen = new Set<string>();
  const { found, folders, cut } = walk(roots, skip);
  const judge = (top: string) => {
    const known = before.tops.has(top);
    const made = before.tops.get(top) !== signature(top) &&
      (changedSince(top) || changedSince(join(top, ".git")) || changedSince(join(top, "HEAD")));
    const changed = known && !made ? differs : changedSince;
    for (const g of gitDirsOf(top, changed, made, out)) checkGitDir(g, changed, made, out, seen);
  };
  for (const top of found) judge(top);
  // Submodules where the walk does not go (`node_modules/x`, past the budget): the gitlinks of
  // every index (read again only when the index changed).
  for (const top of found) {
    for (const g of plainGitDirs(top)) {
      for (const p of gitlinksCached(g)) {
        const sub = join(top, p);
        if (!found.has(sub)) judge(sub);
      }
    }
  }
  if (!cut) lastSeen.set(JSON.stringify(roots), seenTops(found));
  else lastSeen.delete(JSON.stringify(roots));
  return { disarmed: out, folders, cut };
}

/** Every folder of the roots (but those `folderListing` skips), and those holding a repository. */
/** Folders the look does not go into: those the call could not write (HOME's hidden entries). */
export type Skip = (dir: string) => boolean;

function walk(
  roots: readonly string[],
  skip: Skip,
): { found: Set<string>; folders: number; cut: boolean } {
  const found = new Set<string>();
  let folders = 0;
  let cut = false;
  const outer = roots.filter((r) => !roots.some((o) => o !== r && within(r, o)));
  for (const root of outer) {
    let level = [root];
    while (level.length > 0 && !cut) {
      const next: string[] = [];
      for (const dir of level) {
        if (++folders > FOLDER_BUDGET) {
          cut = true;
          break;
        }
        const l = folderListing(dir);
        if (!l) continue;
        if (l.repo) found.add(dir);
        next.push(...l.dirs.filter((d) => !skip(d)));
      }
      level = next;
    }
  }
  return { found, folders, cut };
}

/** What tells a repository from one made in its place: its `.git`'s (or `HEAD`'s) identity. */
function signature(top: string): string {
  for (const name of [".git", "HEAD"]) {
    try {
      const st = Deno.lstatSync(join(top, name));
      return `${name}:${st.dev}:${st.ino}:${st.isSymlink}:${st.isFile}`;
    } catch {
      // not this one
    }
  }
  return "none";
}

/** The git dir of a repository at `top` without judging it: `.git` or where it points. */
function plainGitDirs(top: string): string[] {
  return gitDirsOf(top, () => false, false, []);
}

/** Each index's gitlinks, with the index's identity and times they were read at. */
const linksKept = new Map<string, { stamp: string; links: string[] }>();

function gitlinksCached(g: string): string[] {
  const index = join(g, "index");
  let stamp: string;
  try {
    const st = Deno.statSync(index);
    stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  } catch {
    return [];
  }
  const kept = linksKept.get(index);
  if (kept?.stamp === stamp) return kept.links;
  const links = gitlinksOf(g);
  linksKept.set(index, { stamp, links });
  if (linksKept.size > 256) linksKept.delete(linksKept.keys().next().value!);
  return links;
}

/**
 * The git dirs of the repository at `top`: `.git` (a folder, or where a `.git` file or link
 * points), or `top` itself when it is a bare repository. A `.git` file the call made that points
 * at a git dir that would run a program (one in the temp folder, say) is renamed aside.
 */
function gitDirsOf(
  top: string,
  changed: (p: string) => boolean,
  fresh: boolean,
  out: Disarmed[],
): string[] {
  const dotGit = join(top, ".git");
  let st: Deno.FileInfo | undefined;
  try {
    st = Deno.lstatSync(dotGit);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory) return [dotGit];
  if (st) {
    let target: string | undefined;
    try {
      target = st.isSymlink
        ? Deno.realPathSync(dotGit)
        : resolve(top, /^gitdir:\s*(.+)$/m.exec(Deno.readTextFileSync(dotGit))?.[1].trim() ?? "");
    } catch {
      target = undefined;
    }
    if (!target || target === top) return [];
    if ((fresh || changed(dotGit)) && runsSomething(target)) {
      // Where it points may lie outside the roots (the temp folder): the pointer goes.
      const kind = st.isSymlink ? "link" : "file";
      move(dotGit, `a .git ${kind} to ${target}, which runs programs,`, out);
      return [];
    }
    return [target];
  }
  const bare = ["HEAD", "objects", "refs", "config"].every((n) => exists(join(top, n)));
  return bare ? [top] : [];
}

/**
 * Disarms what git dir `g` runs that changed since the call started — all of it when `fresh`
 * (a repository the call made) — and what changed in its common dir.
 */
function checkGitDir(
  g: string,
  changed: (p: string) => boolean,
  fresh: boolean,
  out: Disarmed[],
  seen: Set<string>,
): void {
  if (seen.has(g)) return;
  seen.add(g);
  const now = (p: string) => fresh || changed(p);
  for (const name of ["config", "config.worktree"]) {
    const file = join(g, name);
    if (exists(file) && now(file)) {
      const why = configRuns(file);
      if (why) move(file, `a git config that ${why}`, out);
    }
  }
  const common = join(g, "commondir");
  const inWorktrees = basename(dirname(g)) === "worktrees";
  if (exists(common)) {
    if (now(common) && !inWorktrees) {
      move(common, "a commondir (git takes config and hooks from where it points)", out);
    } else {
      try {
        const c = resolve(g, Deno.readTextFileSync(common).trim());
        // The common dir is the person's repository: only what changed in it.
        if (c !== g) checkGitDir(c, changed, false, out, seen);
      } catch {
        // unreadable: git fails there too
      }
    }
  }
  // A hook made, changed or renamed into place changes its own change time: the person's
  // other hooks stay.
  for (const hook of hooksIn(join(g, "hooks"))) if (now(hook)) move(hook, "a git hook", out);
}

/** The hooks in a folder: every entry but the `.sample` files and what was disarmed. */
function hooksIn(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)]
      .filter((e) => !e.isDirectory && !e.name.endsWith(".sample") && !e.name.includes(DISARMED))
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/** Whether a git dir would run a program: its config does, or it has a hook. */
function runsSomething(g: string): boolean {
  return ["config", "config.worktree"].some((n) => configRuns(join(g, n)) !== undefined) ||
    hooksIn(join(g, "hooks")).length > 0 ||
    (exists(join(g, "commondir")) && basename(dirname(g)) !== "worktrees");
}

/**
 * What a config file makes git run, in words ("sets core.fsmonitor"), or undefined: a key of
 * {@link PROGRAM_KEYS} whose value runs a program, an include, `core.hooksPath`.
 */
export function configRuns(file: string): string | undefined {
  for (const e of gitEntriesOf(file)) {
    const key = e.key.toLowerCase();
    const value = e.value?.trim() ?? "";
    if (/^include(if\..*)?\.path$/.test(key) || key === "core.hookspath") return `sets ${e.key}`;
    const kind = programKind(key);
    if (!kind || !value) continue;
    const runs = kind === "bang"
      ? value.startsWith("!")
      : kind === "shell-or-bool"
      ? !/^(true|false|yes|no|on|off|1|0)$/i.test(value)
      : kind === "helper"
      ? value.startsWith("!") || value.includes("/")
      : true;
    if (runs) return `sets ${e.key}`;
  }
  return undefined;
}

/** Renames `path` aside (a free name ending in {@link DISARMED}) and records it. */
function move(path: string, why: string, out: Disarmed[]): void {
  for (let n = 0; n < 100; n++) {
    const to = `${path}${DISARMED}${n === 0 ? "" : `.${n}`}`;
    if (exists(to)) continue;
    try {
      Deno.renameSync(path, to);
      out.push({ path, movedTo: to, why });
    } catch {
      // not ours to move (gone meanwhile, or a read-only mount's)
    }
    return;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
