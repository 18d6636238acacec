/**
 * What the sandbox hides and what it keeps read-only inside writable folders (SPEC S8.3):
 * credential stores under HOME, and a repository's `.git/config`, `.git/hooks` and `.magi`
 * that git or magi would run from outside the sandbox later.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { lstatNoted, noteContents, realNoted, statNoted } from "./sandbox_reads.ts";
import { ownUid } from "../exec/unix_socket.ts";
import { identity as socketIdentity, isDead, probeLater } from "./sandbox_dead.ts";
import { isRelocatedStore } from "./relocated_stores.ts";
import { firstMissing, gitEntriesOf, programPaths } from "./git_programs.ts";

/** Credential stores under HOME that every mode hides. */
export const CREDENTIAL_STORES = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gcloud",
  ".kube",
  ".docker/config.json",
  ".netrc",
  ".npmrc",
  ".git-credentials",
  ".config/gh",
  ".pypirc",
  ".cargo/credentials.toml",
  ".config/git/credentials",
  // Agents' and tools' own logins and keys.
  ".claude/.credentials.json",
  ".codex/auth.json",
  ".config/gemini",
  ".gemini/oauth_creds.json",
  ".vault-token",
  ".pgpass",
  ".my.cnf",
  ".config/containers/auth.json",
  ".config/sops",
  ".azure",
  ".terraform.d/credentials.tfrc.json",
  ".config/age",
  ".password-store",
  ".local/share/keyrings",
  // Package registries' and build tools' publishing tokens.
  ".cargo/credentials",
  ".gem/credentials",
  ".local/share/gem/credentials",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".gradle/gradle.properties",
  ".ivy2/.credentials",
  ".sbt/credentials",
  ".nuget/NuGet/NuGet.Config",
  ".composer/auth.json",
  ".config/composer/auth.json",
  ".config/configstore",
  ".terraformrc",
  // Forges', clouds' and storage tools' logins.
  ".config/glab-cli",
  ".config/hub",
  ".config/rclone",
  ".config/doctl",
  ".config/hcloud",
  ".config/openstack",
  ".config/op",
  ".op",
  ".oci",
  ".s3cfg",
  ".boto",
  ".mc/config.json",
  ".fly",
  ".pulumi/credentials.json",
  ".databrickscfg",
  ".aliyun",
  ".config/ngrok",
  ".ngrok2",
  ".config/github-copilot",
  ".gitcookies",
  ".subversion/auth",
  // Browsers' cookies and saved passwords.
  ".mozilla",
  ".config/google-chrome",
  ".config/chromium",
  ".config/BraveSoftware",
];

/**
 * Shell and client histories under HOME that every mode hides: what a person types holds
 * secrets (`export GITHUB_TOKEN=...`, redis-cli's `AUTH`, a psql password, a REPL's keys).
 */
export const HISTORIES = [
  ".bash_history",
  ".zsh_history",
  ".zhistory",
  ".histfile",
  ".sh_history",
  ".history",
  ".local/share/fish/fish_history",
  ".python_history",
  ".node_repl_history",
  ".deno_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".rediscli_history",
  ".irb_history",
  ".pry_history",
  ".mongosh",
  ".dbshell",
  ".lesshst",
  ".viminfo",
  ".ipython/profile_default/history.sqlite",
  ".julia/logs/repl_history.jl",
];

/** The system's password hashes: unreadable but to root, hidden from magi run as root too. */
export const SYSTEM_SECRETS = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];

/**
 * Other users' home folders, when magi runs as root (uid 0 reads them without a capability):
 * the folders in `/home` and `/root`, but for one HOME lies in or one holding a folder in
 * `keep` (a root, the folders a call needs, magi's own program).
 */
export function otherHomes(home: string, keep: readonly string[]): string[] {
  if (ownUid() !== 0) return [];
  const mine = home ? real(resolve(home)) ?? resolve(home) : "";
  const kept = [...keep, dirname(Deno.execPath())].map((k) => real(k) ?? k);
  const out: string[] = [];
  const consider = (p: string) => {
    const r = real(p) ?? p;
    if (mine && (within(mine, r) || within(r, mine))) return;
    if (kept.some((k) => within(k, r))) return;
    out.push(p);
  };
  noteContents("/home");
  try {
    for (const e of Deno.readDirSync("/home")) {
      if (e.isDirectory || e.isSymlink) consider(join("/home", e.name));
    }
  } catch {
    // no /home
  }
  if (kindOf("/root") === "dir") consider("/root");
  return out;
}

/**
 * The home folder `/etc/passwd` gives a user: the sixth field of the first line whose third is
 * `uid`; "" when there is none, the line is malformed or the folder is not absolute. magi hides
 * the credential stores under it as under HOME (HOME may be unset — cron, `env -i` — or point
 * elsewhere — `sudo -E`, a container's `HOME=/work`) and takes it for HOME when HOME is unset.
 *
 * @param uid magi's uid (default: `Deno.uid()`; undefined where the system has none)
 * @param passwd the text of `/etc/passwd` (default: read now; tests pass their own)
 */
export function passwdHome(
  uid: number | undefined = ownUid(),
  passwd: string | undefined = text("/etc/passwd"),
): string {
  if (uid === undefined || passwd === undefined) return "";
  for (const line of passwd.split("\n")) {
    const f = line.split(":");
    if (f.length >= 7 && f[2] === String(uid)) return isAbsolute(f[5]) ? f[5] : "";
  }
  return "";
}

/**
 * The home folders the sandbox leaves in sight, whose credential stores it hides as HOME's:
 * HOME, the passwd home (see {@link passwdHome}), and each folder in `/home` and `/root` that a
 * folder the call is given lies in (a root, a needed folder such as `DENO_DIR` under
 * `/root/.cache`, magi's own program) — those {@link otherHomes} keeps when magi is root. Other
 * users' homes are not walked when magi is not root: their own permissions keep them (and
 * walking every home of a large `/home` could mount each one).
 */
export function homesInSight(
  home: string,
  userHome: string,
  keep: readonly string[],
): string[] {
  const hiddenWhole = new Set(otherHomes(home, keep));
  const kept = [...keep, dirname(Deno.execPath())].map((k) => real(k) ?? k);
  const out = new Set<string>([home, userHome].filter((h) => h !== "").map((h) => resolve(h)));
  const consider = (p: string) => {
    const r = real(p) ?? p;
    if (!hiddenWhole.has(p) && kept.some((k) => within(k, r))) out.add(p);
  };
  noteContents("/home");
  try {
    for (const e of Deno.readDirSync("/home")) {
      if (e.isDirectory || e.isSymlink) consider(join("/home", e.name));
    }
  } catch {
    // no /home
  }
  if (kindOf("/root") === "dir") consider("/root");
  return [...out];
}

/**
 * Kerberos ticket caches in a temp folder: MIT's default `FILE:/tmp/krb5cc_UID`, and those with
 * a suffix (`krb5cc_1000_Xy12`) that PAM and sssd make.
 */
export const TICKET_CACHE = /^krb5cc_/;

/** Whether `path` is a Kerberos ticket cache directly in one of the `temps` folders. */
export function isTicketCache(path: string, temps: readonly string[]): boolean {
  return TICKET_CACHE.test(basename(path)) && temps.includes(dirname(path));
}

const cacheListings = new Map<string, { mtime: number; ctime: number; found: string[] }>();

/**
 * The Kerberos ticket caches in folders (the temp folders), each folder read again only when
 * its times changed: one `stat` per folder and call otherwise.
 */
export function ticketCaches(dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of new Set(dirs)) {
    let st: Deno.FileInfo;
    try {
      st = Deno.statSync(dir);
    } catch {
      continue;
    }
    const mtime = st.mtime?.getTime() ?? NaN;
    const ctime = st.ctime?.getTime() ?? NaN;
    let l = cacheListings.get(dir);
    if (!l || l.mtime !== mtime || l.ctime !== ctime) {
      const found: string[] = [];
      try {
        for (const e of Deno.readDirSync(dir)) {
          if (!e.isDirectory && TICKET_CACHE.test(e.name)) found.push(join(dir, e.name));
        }
      } catch {
        continue;
      }
      l = { mtime, ctime, found };
      // A change in the same moment as this reading might keep the time: not kept then.
      if (Number.isFinite(mtime) && Date.now() - mtime > 100) cacheListings.set(dir, l);
    }
    out.push(...l.found);
  }
  return out;
}

/**
 * HOME's start-up files: read-only when HOME lies inside a writable folder, so a sandboxed
 * program cannot leave something the person's own shell or git runs later.
 */
export const HOME_STARTUP = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".gitconfig",
  ".config/git",
];

/**
 * Start-up entries of HOME, besides {@link HOME_STARTUP}, whose symlinks' targets are kept too:
 * the folders a desktop session, systemd or fish run from and `~/.local/bin` (on PATH).
 */
const LINKED_STARTUP = [
  ".local/bin",
  ".config/fish",
  ".config/systemd",
  ".config/autostart",
  ".config/environment.d",
];

/**
 * What HOME's start-up files reach beyond themselves, as real paths: the targets of those that
 * are symlinks (or lie in a linked folder: `~/.config -> dotfiles/config`), and what HOME's git
 * configs include (see {@link gitConfigReach}). `write` refuses them; the sandbox keeps those a
 * writable folder holds read-only.
 *
 * @param realOf resolves a path's symlinks (default: noted for the sandbox)
 */
export function startupReach(
  home: string,
  realOf: (path: string) => string | undefined = real,
): string[] {
  if (!home) return [];
  const out = new Set<string>();
  const homeReal = realOf(home) ?? home;
  for (const rel of [...HOME_STARTUP, ...LINKED_STARTUP]) {
    const p = join(homeReal, rel);
    const r = realOf(p);
    if (r && r !== p) out.add(r);
  }
  // The system's git config too: what it runs may lie in a root as well.
  for (
    const file of [
      join(homeReal, ".gitconfig"),
      join(homeReal, ".config/git/config"),
      SYSTEM_GITCONFIG,
    ]
  ) {
    for (const p of gitConfigReach(file, homeReal, [], realOf)) out.add(p);
  }
  return [...out];
}

/** The system's git config file (Debian's git; `git config --system`). */
const SYSTEM_GITCONFIG = "/etc/gitconfig";

/** Whether `path` is `dir` or inside it (both absolute, normalised). */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/** A path's kind, without following a final symlink ("link"), or undefined when missing. */
export function kindOf(path: string): "dir" | "file" | "link" | undefined {
  const s = lstatNoted(path);
  if (!s) return undefined;
  return s.isSymlink ? "link" : s.isDirectory ? "dir" : "file";
}

function real(path: string): string | undefined {
  return realNoted(path);
}

/** A file's text (noted as read), or undefined when it cannot be read. */
function text(path: string): string | undefined {
  noteContents(path);
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * What a git config file makes git read or run from elsewhere: the files it includes
 * (`include.path`, `includeIf.<condition>.path`, followed through their own includes) and its
 * `core.hooksPath` folder, as real paths (a missing include as its resolved path). An include's relative path
 * is taken from the including file's folder, a relative `hooksPath` from `top` (the worktree's
 * top, where git runs hooks) and from the git dir; `~/` from `home`. Every file read is noted
 * (`sandbox_reads.ts`), so a changed include voids the sandbox's cached arguments.
 *
 * @param file a config file (`.git/config`, `~/.gitconfig`); a missing one reaches nothing
 * @param top folders a relative `core.hooksPath` is taken from
 * @param realOf resolves a path's symlinks (default: noted for the sandbox)
 */
export function gitConfigReach(
  file: string,
  home: string,
  top: readonly string[] = [],
  realOf: (path: string) => string | undefined = real,
  seen: Set<string> = new Set(),
): string[] {
  const out = new Set<string>();
  const at = realOf(file);
  if (!at || seen.has(at) || seen.size > 32) return [];
  seen.add(at);
  noteContents(at);
  const expand = (v: string, base: readonly string[]) =>
    v.startsWith("~/") && home ? [join(home, v.slice(2))] : base.map((b) => resolve(b, v));
  for (const entry of gitEntriesOf(at)) {
    const lower = entry.key.toLowerCase();
    const section = lower.slice(0, lower.indexOf("."));
    const key = lower.slice(lower.lastIndexOf(".") + 1);
    const value = entry.value?.trim();
    if ((section === "include" || section === "includeif") && key === "path" && value) {
      for (const p of expand(value, [dirname(at)])) {
        const r = realOf(p);
        // A missing one is named as written: `write` refuses to make it.
        out.add(r ?? p);
        if (r) { for (const q of gitConfigReach(r, home, top, realOf, seen)) out.add(q); }
      }
    } else if (lower === "core.hookspath" && value) {
      for (const p of expand(value, top.length > 0 ? top : [dirname(at)])) {
        const r = realOf(p);
        if (r) out.add(r);
      }
    } else {
      // A program git runs (`core.fsmonitor = ./watch.sh`), from the worktree's top: a missing
      // one as its resolved path, which the sandbox keeps from being made.
      // A folder a line names (`!cd ./src && make`, `./`) is no program: not the whole tree.
      for (const p of programPaths(entry, home, top.slice(0, 1))) {
        const r = realOf(p);
        if (!r || kindOf(r) !== "dir") out.add(r ?? p);
      }
    }
  }
  return [...out];
}

/** One hidden path and why it is hidden, in words for a refusal ("a credential store"). */
export interface Hidden {
  path: string;
  why: string;
  /** What it was when last looked at, if it was (`hiddenFor`). */
  kind?: "dir" | "file" | "link" | "missing";
}

/**
 * The paths to hide, with symlinks resolved to what they name (both are hidden), and why: the
 * credential stores under `home`, `deny_read` entries ("~/" against `home`) and magi's own
 * files. The one list both the sandbox (mounts over them) and the file builtins (refusals,
 * and mounts in their body process) hide.
 *
 * and the targets of the symlinks inside a hidden credential store or `deny_read` folder (three
 * levels down, 500 entries at most; not the browsers' profiles).
 *
 * @param realOf resolves a path's symlinks (default: noted for the sandbox's reuse, see
 *   `sandbox_reads.ts`; the file builtins pass the system's `realpath`, many times faster)
 * @param walked receives the hidden folders read for symlinks (a new link there changes them)
 * @param keep folders the call is given (roots, needed, visible): another user's home folder
 *   holding one is not hidden (see {@link otherHomes})
 */
export function hiddenEntries(
  home: string,
  denyRead: readonly string[],
  own: readonly string[],
  realOf: (path: string) => string | undefined = real,
  walked: string[] = [],
  keep: readonly string[] = [],
  userHome: string = passwdHome(),
): Hidden[] {
  const out = new Map<string, Hidden>();
  const add = (p: string, why: string) => {
    const abs = resolve(p);
    if (!out.has(abs)) out.set(abs, { path: abs, why });
    const r = realOf(abs);
    if (r && !out.has(r)) out.set(r, { path: r, why });
  };
  // Under HOME, the passwd home and every home folder left in sight (see homesInSight).
  const homes = homesInSight(home, userHome, keep);
  for (const h of homes) {
    for (const rel of CREDENTIAL_STORES) add(join(h, rel), "a credential store");
    for (const rel of HISTORIES) add(join(h, rel), "a shell or client history");
  }
  for (const p of SYSTEM_SECRETS) if (kindOf(p) !== undefined) add(p, "a system password file");
  for (const p of otherHomes(home, keep)) add(p, "another user's home folder");
  for (const p of denyRead) {
    add(p.startsWith("~/") ? join(home, p.slice(2)) : p, "listed in sandbox.deny_read");
  }
  for (const p of own) {
    if (!isAbsolute(p)) continue;
    add(
      p,
      TICKET_CACHE.test(basename(p))
        ? "a Kerberos ticket cache"
        : isRelocatedStore(p)
        ? "a credential store"
        : "magi's own files",
    );
  }
  // A link inside a hidden folder (`~/.aws/credentials -> ~/dotfiles/aws/credentials`, as stow
  // and yadm lay them out) would leave its target readable by the target's own path.
  // Not magi's own (its state changes on every call, which would void the sandbox's reuse) nor
  // the browsers' profiles (large, busy, their links are locks and sockets).
  const walkable = (h: Hidden) =>
    (h.why === "a credential store" || h.why === "listed in sandbox.deny_read") &&
    !homes.some((at) => BROWSERS.some((b) => within(h.path, join(at, b))));
  for (const h of [...out.values()].filter(walkable)) {
    for (const link of linksIn(h.path, walked)) {
      const r = realOf(link);
      // Not a folder HOME lies in (a link to `/` or `~`): that would hide everything.
      if (!r || out.has(r) || within(h.path, r) || homes.some((at) => within(at, r))) continue;
      out.set(r, { path: r, why: h.why });
    }
  }
  return [...out.values()];
}

/** The browsers' profiles among the stores, which {@link linksIn} does not walk. */
const BROWSERS = [".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware"];

/** How deep below a hidden folder, and how many entries in all, {@link linksIn} looks. */
const LINK_DEPTH = 3;
const LINK_BUDGET = 500;

/**
 * The symlinks inside folder `dir`, down to {@link LINK_DEPTH} levels and within
 * {@link LINK_BUDGET} entries (a hidden folder is a store, not a tree); `walked` receives the
 * folders read. Empty when `dir` is not a folder.
 */
function linksIn(dir: string, walked: string[]): string[] {
  const out: string[] = [];
  if (kindOf(dir) !== "dir") return out;
  let level = [dir];
  let budget = LINK_BUDGET;
  for (let d = 0; d < LINK_DEPTH && level.length > 0; d++) {
    const next: string[] = [];
    for (const at of level) {
      noteContents(at);
      walked.push(at);
      let entries: Deno.DirEntry[];
      try {
        entries = [...Deno.readDirSync(at)];
      } catch {
        continue;
      }
      for (const e of entries) {
        if (budget-- <= 0) return out;
        if (e.isSymlink) out.push(join(at, e.name));
        else if (e.isDirectory) next.push(join(at, e.name));
      }
    }
    level = next;
  }
  return out;
}

/**
 * The paths of {@link hiddenEntries} the sandbox mounts over: one that lies under a symlinked
 * folder (`~/.config/magi -> dotfiles/magi`) is left out, as its real path is listed (bwrap
 * cannot make a mount point through a symlink).
 */
export function hiddenPaths(
  home: string,
  denyRead: readonly string[],
  own: readonly string[],
  keep: readonly string[] = [],
  userHome: string = passwdHome(),
): string[] {
  return hiddenEntries(home, denyRead, own, real, [], keep, userHome).map((h) => h.path).filter(
    (p) => {
      const parent = dirname(p);
      const r = real(parent);
      return r === undefined || r === parent;
    },
  );
}

/** A folder's sub-folders and whether it holds a repository, as last read. */
interface Listing {
  mtime: number;
  ctime: number;
  ino: number | null;
  dirs: string[];
  repo: boolean;
  /** Unix sockets in the folder, and what tells each file from a later one (`sandbox_dead.ts`). */
  sockets: string[];
  socketIds: string[];
  /** Named pipes (FIFOs) in the folder: opening one for writing works through a read-only mount. */
  fifos: string[];
  /** Whether sockets and FIFOs are all the folder holds. */
  onlySockets: boolean;
}

const listings = new Map<string, Listing>();

/**
 * A folder's listing, read again only when its modification time changed (so a call costs one
 * `stat` per folder once the tree has been read); undefined when it cannot be read.
 */
function listing(dir: string): Listing | undefined {
  if (once?.has(dir)) return once.get(dir);
  const l = listingNow(dir);
  once?.set(dir, l);
  return l;
}

/**
 * A folder's sub-folders (but `.git`, `node_modules` and the other build and cache folders
 * skipped) and whether it holds a repository, from the cached listing (one `stat` while
 * unchanged); undefined when it cannot be read.
 */
export function folderListing(dir: string): { dirs: readonly string[]; repo: boolean } | undefined {
  return listing(dir);
}

/** Listings already looked at during {@link listingsOnce}. */
let once: Map<string, Listing | undefined> | undefined;

/** Runs `f` looking at each folder's listing once (one `stat`), however often it is asked. */
export function listingsOnce<T>(f: () => T): T {
  const outer = once;
  once = new Map();
  try {
    return f();
  } finally {
    once = outer;
  }
}

function listingNow(dir: string): Listing | undefined {
  const st = statNoted(dir);
  if (!st) return undefined;
  const mtime = st.mtime?.getTime() ?? NaN;
  // ctime too: `utimes` can set mtime back, not ctime.
  const ctime = st.ctime?.getTime() ?? NaN;
  const cached = listings.get(dir);
  if (cached && cached.mtime === mtime && cached.ctime === ctime && cached.ino === st.ino) {
    return cached;
  }
  const names = new Set<string>();
  const dirs: string[] = [];
  const sockets: string[] = [];
  const socketIds: string[] = [];
  const fifos: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      names.add(e.name);
      if (e.isDirectory && !SKIP.has(e.name)) dirs.push(join(dir, e.name));
      else if (!e.isDirectory && !e.isFile && !e.isSymlink) {
        try {
          const path = join(dir, e.name);
          const sst = Deno.lstatSync(path);
          if (sst.isSocket) {
            sockets.push(path);
            socketIds.push(socketIdentity(path, sst));
          } else if (sst.isFifo) fifos.push(path);
        } catch {
          // gone
        }
      }
    }
  } catch {
    return undefined;
  }
  const repo = names.has(".git") ||
    ["HEAD", "objects", "refs", "config"].every((n) => names.has(n));
  const onlySockets = sockets.length + fifos.length > 0 &&
    sockets.length + fifos.length === names.size;
  const out = {
    mtime,
    ctime,
    ino: st.ino,
    dirs,
    repo,
    sockets,
    socketIds,
    fifos,
    onlySockets,
  };
  // A change in the same moment as this reading might keep the time: such a listing is not kept.
  if (Number.isFinite(mtime) && Date.now() - mtime > 100) listings.set(dir, out);
  return out;
}

/**
 * The git dirs below `dir` (a `worktrees` or `modules` folder): each folder holding `HEAD`,
 * down to `depth` (a submodule's name may have slashes: `modules/lib/a`), within the budget.
 */
function gitDirsUnder(dir: string, depth: number): string[] {
  const out: string[] = [];
  let level = [dir];
  let budget = SCAN_BUDGET;
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: string[] = [];
    for (const at of level) {
      let names: string[];
      noteContents(at);
      try {
        names = [...Deno.readDirSync(at)].filter((e) => e.isDirectory).map((e) => e.name);
      } catch {
        continue;
      }
      for (const sub of names.map((n) => join(at, n))) {
        if (budget-- <= 0) return out;
        if (kindOf(join(sub, "HEAD")) === "file") out.push(sub);
        // A submodule's own submodules: `modules/a/modules/b`, reached through gitDir.
        else next.push(sub);
      }
    }
    level = next;
  }
  return out;
}

/** One read-only re-mount inside a writable folder. */
export interface Protect {
  path: string;
  /**
   * "dir"/"file": bind it read-only; "missing-dir": an empty read-only folder there;
   * "absent": a file git reads from a git dir that is missing (`commondir`, `config.worktree`):
   * no mount point can be made for it without making it, and git would die on an empty one,
   * so one a program made there is removed once the call's programs have ended;
   * "missing-file": a missing file a git config names (a program it runs, an include): an empty
   * read-only file in its place, which bwrap makes on the host and the call's end removes.
   */
  kind: "dir" | "file" | "missing-dir" | "absent" | "missing-file";
}

/** At most this many folders are looked at below each writable folder for nested repositories. */
const SCAN_BUDGET = 200;
const SKIP = new Set([".git", "node_modules", ".cache", "target", "dist", "vendor"]);

/**
 * What stays read-only inside the writable folders: for every repository found at, above (as
 * far as a writable folder reaches) or up to two levels below each folder, its `.git` file,
 * `config`, `config.worktree`, `hooks` (made as an empty read-only folder when missing) and those
 * of the common dir of a worktree; a bare repository's `config` and `hooks`; each repository's
 * `.magi` and each writable folder's own (made empty and read-only when missing); HOME's
 * start-up files when HOME is writable; magi's own folders (`own`) wherever they are writable.
 *
 * @param writable real absolute folders the program may write
 * @param shallow those of them searched one level down only (the temp folder: many entries)
 * @param part "shallow": only the search of the shallow folders (whose listings change most);
 *   "rest": all but that; "all" (default): both
 */
export function protectedPaths(
  writable: readonly string[],
  home: string,
  shallow: readonly string[] = [],
  own: readonly string[] = [],
  part: "all" | "shallow" | "rest" = "all",
): Protect[] {
  const isWritable = (p: string) => writable.some((w) => within(p, w));
  const out = new Map<string, Protect>();
  const add = (path: string, kind: Protect["kind"]) => {
    if (isWritable(path) && !out.has(path)) out.set(path, { path, kind });
  };
  /**
   * What a git config reaches (an include, a program it runs): read-only when it exists; a
   * missing one kept from being made — an empty read-only file in its place (removed when the
   * call ends), or its first missing folder made empty and read-only.
   */
  const addReach = (p: string) => {
    const k = kindOf(p);
    if (k === "dir" || k === "file") return add(p, k);
    if (k === "link") return;
    const first = firstMissing(p);
    add(first, first === p ? "missing-file" : "missing-dir");
  };
  const seen = new Set<string>();
  /** `nested`: a worktree's git dir (its hooks are the common dir's) or a submodule's. */
  const gitDir = (g: string, nested?: "worktree" | "module") => {
    if (seen.has(g)) return;
    seen.add(g);
    for (const name of ["config", "config.worktree", ...(nested ? ["gitdir"] : [])]) {
      const k = kindOf(join(g, name));
      if (k) add(join(g, name), k === "dir" ? "dir" : "file");
      else if (name !== "gitdir") add(join(g, name), "absent");
    }
    // What those configs include, and their hooks folder (`core.hooksPath`: `.githooks/`).
    for (const name of ["config", "config.worktree"]) {
      for (const p of gitConfigReach(join(g, name), home, [dirname(g), g])) addReach(p);
    }
    const hooks = join(g, "hooks");
    const hk = kindOf(hooks);
    // git runs a worktree's hooks from the common dir: one missing here is never run.
    if (hk !== undefined || nested !== "worktree") {
      add(hooks, hk === undefined ? "missing-dir" : hk === "dir" ? "dir" : "file");
    }
    const common = text(join(g, "commondir"))?.trim();
    if (common !== undefined) {
      if (common && common !== ".") {
        const c = resolve(g, common);
        if (kindOf(c) === "dir") gitDir(c);
      }
      add(join(g, "commondir"), "file");
    } else if (kindOf(join(g, "commondir")) === undefined) {
      // Missing in every ordinary repository: made by a program, git takes config from there.
      add(join(g, "commondir"), "absent");
    }
    // A worktree's and a submodule's git dirs (`worktrees/X`, `modules/X`, nested modules):
    // git runs their config and hooks as it runs the repository's own.
    for (const sub of ["worktrees", "modules"]) {
      const kind = sub === "modules" ? "module" : "worktree";
      for (const d of gitDirsUnder(join(g, sub), kind === "module" ? 4 : 1)) gitDir(d, kind);
    }
  };
  const repoAt = (top: string) => {
    const dotGit = join(top, ".git");
    const k = kindOf(dotGit);
    const target = k === "link" ? real(dotGit) : undefined;
    if (k === "dir") gitDir(dotGit);
    else if (target && kindOf(target) === "dir") gitDir(target);
    else if (k === "file" || k === "link") {
      add(dotGit, "file");
      // Unreadable (a link to nowhere): nothing of git's to protect.
      const m = /^gitdir:\s*(.+)$/m.exec(text(dotGit) ?? "");
      if (m) {
        const g = resolve(top, m[1].trim());
        if (kindOf(g) === "dir") gitDir(g);
      }
    }
    const bare = ["HEAD", "objects", "refs"].every((n) => kindOf(join(top, n)) !== undefined) &&
      kindOf(join(top, "config")) === "file";
    if (bare) gitDir(top);
    const magi = join(top, ".magi");
    const mk = kindOf(magi);
    if ((k || bare) && mk) add(magi, mk === "dir" ? "dir" : "file");
    return k !== undefined || bare;
  };
  for (const w of writable) {
    if (part !== "shallow") {
      // The folder itself and the repositories it lies in.
      for (let dir = w;; dir = dirname(dir)) {
        repoAt(dir);
        if (dirname(dir) === dir) break;
      }
      const magi = join(w, ".magi");
      const mk = kindOf(magi);
      add(magi, mk === undefined ? "missing-dir" : mk === "dir" ? "dir" : "file");
    }
    if (part !== "all" && (part === "shallow") !== shallow.includes(w)) continue;
    // Nested repositories, two levels down (one in the temp folder), within a budget.
    let budget = SCAN_BUDGET;
    let level = [w];
    const levels = shallow.includes(w) ? 1 : 2;
    for (let depth = 0; depth < levels && budget > 0; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        for (const sub of listing(dir)?.dirs ?? []) {
          if (budget-- <= 0) break;
          if (listing(sub)?.repo) repoAt(sub);
          next.push(sub);
        }
      }
      level = next;
    }
  }
  if (part === "shallow") return [...out.values()];
  // magi's own folders (config, state, cache) where they lie in a writable folder: made empty
  // and read-only when missing, so no call can plant a config or a tool link for a later one.
  for (const o of own) {
    // A symlinked one (`~/.config/magi -> dotfiles/magi`): where it leads.
    const d = kindOf(o) === "link" ? real(o) ?? o : o;
    // One holding a writable folder (a PATH entry `/tmp`) would take that folder's writes away.
    if (writable.some((w) => within(w, d))) continue;
    const k = kindOf(d);
    // A missing one inside what is kept read-only already (magi's config folder, `.magi`)
    // cannot be made there, and needs no cover of its own.
    if (k === undefined && [...out.keys()].some((q) => within(d, q) && q !== d)) continue;
    add(d, k === undefined ? "missing-dir" : k === "dir" ? "dir" : "file");
  }
  if (isWritable(home)) {
    for (const rel of HOME_STARTUP) {
      const p = join(home, rel);
      const k = kindOf(p);
      if (k === "dir" || k === "file") add(p, k);
    }
  }
  // Where HOME's start-up files lead (`~/.bashrc -> dotfiles/bashrc`, stow), when a writable
  // folder holds that, and what HOME's git configs include: wherever HOME lies.
  for (const p of startupReach(home)) {
    if (!writable.some((w) => within(w, p))) addReach(p);
  }
  return [...out.values()];
}

/**
 * The folders between a writable folder and each protected path, to be bound onto themselves
 * first: a mount point cannot be renamed or removed, so a program cannot move `.git` (or the
 * repository, or a folder above it) aside and put its own `config` and hooks in its place.
 *
 * @returns folders, shallowest first
 */
export function pinsFor(protects: readonly Protect[], writable: readonly string[]): string[] {
  const pins = new Set<string>();
  for (const { path } of protects) {
    const outer = writable.filter((w) => within(path, w) && w !== path)
      .sort((a, b) => b.length - a.length)[0];
    if (!outer) continue;
    for (let dir = dirname(path); dir !== outer && within(dir, outer); dir = dirname(dir)) {
      if (kindOf(dir) === "dir") pins.add(dir);
    }
  }
  return [...pins].sort((a, b) => a.split("/").length - b.split("/").length);
}

/**
 * The most sockets one call hides, and the most folders one search reads for them. Past
 * either, the sandbox does not start (the call fails, saying why): a socket left out would be
 * a way out, so the search never stops part-way and lets the call run.
 */
let socketLimits = { sockets: 2000, folders: 20_000 };

/** Sets the search's limits (tests: a crowded temp folder without 20,000 folders). */
export function setSocketLimits(limits: { sockets: number; folders: number }): void {
  socketLimits = { ...limits };
}

/**
 * Whether a folder holds unix sockets and nothing else, as last read (one `stat` while it is
 * unchanged): one empty folder over it covers them all.
 */
export function holdsOnlySockets(dir: string): boolean {
  return listing(dir)?.onlySockets === true;
}

/**
 * Throws when one call would have more sockets (or folders of them) to hide than it may.
 *
 * @throws SandboxSetupError past the limit
 */
export function checkSocketCount(count: number): void {
  if (count > socketLimits.sockets) {
    throw new SandboxSetupError(
      `Cannot start the sandbox: more than ${socketLimits.sockets} unix sockets to hide; ` +
        `remove the old ones`,
    );
  }
}

/** The sandbox cannot be set up for a call: it refuses to start rather than leave a way out. */
export class SandboxSetupError extends Error {
  override name = "SandboxSetupError";
}

/**
 * The unix sockets in folders, each down to its `depth` (1: the folder's own). A socket is a
 * way out of the sandbox: a tmux or screen server, the Docker daemon, systemd, an agent,
 * another magi session's approvals. Folder readings are cached as for repositories.
 *
 * @param keep sockets not to report, and whose folders are not to be emptied
 * @param skip folders not looked into (covered whole by the caller)
 * @param probe whether to probe the sockets found for a listener (`sandbox_dead.ts`); those
 *   found dead are left out (the shared temp folder, where old sessions' sockets pile up)
 * @param fifosOnly report only the named pipes (a program that cannot make a unix socket
 *   reaches no socket: `seccomp.ts`), and folders that hold only sockets and pipes, pipes among
 *   them
 * @returns folders that hold only sockets (cheaper to cover with one empty folder) and the
 *   other sockets
 */
export function socketsIn(
  dirs: readonly { dir: string; depth: number }[],
  keep: ReadonlySet<string> = new Set(),
  skip: ReadonlySet<string> = new Set(),
  probe = false,
  fifosOnly = false,
): { folders: string[]; sockets: string[] } {
  const folders: string[] = [];
  const sockets: string[] = [];
  let budget = socketLimits.folders;
  for (const { dir: top, depth } of dirs) {
    let level = [top];
    for (let d = 0; d < depth && level.length > 0; d++) {
      const next: string[] = [];
      for (const dir of level) {
        if (skip.has(dir)) continue;
        if (budget-- <= 0) {
          // Named pipes alone (unix sockets refused): one past the budget is one deeper than
          // the walk. Refusing would let one call's 20,000 folders stop every later call.
          if (fifosOnly) return { folders, sockets };
          throw new SandboxSetupError(
            `Cannot start the sandbox: more than ${socketLimits.folders} folders under ` +
              `${dirs.map((d) => d.dir).join(", ")} to search for unix sockets (each one a way ` +
              `out); set TMPDIR to a folder of magi's own or clear out old folders`,
          );
        }
        const l = listing(dir);
        if (!l) continue;
        const live = fifosOnly ? [] : l.sockets.filter((s, i) => {
          const id = l.socketIds[i];
          if (!probe) return true;
          if (isDead(id)) return false;
          if (!keep.has(s)) probeLater(s, id);
          return true;
        });
        // A FIFO is never probed: a reader may open it at any time.
        live.push(...l.fifos);
        const mine = live.some((s) => keep.has(s));
        if (live.length === 0) {
          // Nothing to reach there (or only dead sockets).
        } else if (l.onlySockets && !mine && d > 0) folders.push(dir);
        else sockets.push(...live.filter((s) => !keep.has(s)));
        next.push(...l.dirs);
      }
      level = next;
    }
  }
  if (folders.length + sockets.length > socketLimits.sockets) {
    throw new SandboxSetupError(
      `Cannot start the sandbox: more than ${socketLimits.sockets} unix sockets to hide under ` +
        `${dirs.map((d) => d.dir).join(", ")}; remove the old ones`,
    );
  }
  return { folders, sockets };
}

/** What the file builtins hide, as the sandbox does (see {@link hiddenEntries}). */
export interface HiddenSet {
  entries: readonly Hidden[];
  /** Folders under a hidden one that stay readable (the session's own folder). */
  visible: readonly string[];
  /** The temp folders whose Kerberos ticket caches are hidden. */
  temps: readonly string[];
}

/**
 * Why `real` (a real absolute path) is hidden, such as "a credential store"; undefined when
 * it is not.
 */
export function hiddenWhy(real: string, set: HiddenSet | undefined): string | undefined {
  if (!set) return undefined;
  if (isTicketCache(real, set.temps)) return "a Kerberos ticket cache";
  const hit = set.entries.find((h) => within(real, h.path));
  if (!hit) return undefined;
  // A visible folder inside the hidden one, and the path inside that.
  if (set.visible.some((v) => within(real, v) && within(v, hit.path) && v !== hit.path)) {
    return undefined;
  }
  return hit.why;
}

/**
 * The top-level hidden entry of HOME (`~/.bash_profile`, `~/.config`, and `~/bin`, on PATH
 * in Debian's `.profile`) that `path` is or lies in, or undefined (both real absolute paths).
 */
export function homeDotEntry(path: string, home: string): string | undefined {
  if (!home || !within(path, home) || path === home) return undefined;
  const first = path.slice(home.length).replace(/^\/+/, "").split("/")[0];
  return first.startsWith(".") || HOME_KEPT.has(first) ? join(home, first) : undefined;
}

/** Visible entries of HOME that stay read-only too: `~/bin` is on PATH in Debian's `.profile`. */
const HOME_KEPT = new Set(["bin"]);

/** HOME kept read-only but for its visible entries (see {@link homeCover}). */
export interface HomeCover {
  home: string;
  /** The writable folders inside HOME's hidden entries, bound writable again. */
  open: string[];
  /** bwrap's arguments, after the writable folders' own binds. */
  args: string[];
}

/**
 * When a writable folder holds HOME: HOME itself and every hidden entry at its top level stay
 * read-only — start-up files that do not exist yet (`.bash_profile`, `.zshenv`, `.gitconfig`,
 * fish's config, `.local/bin`, `~/.deno/bin/magi`) included, none of them made on the host as
 * a mount point — and its visible entries (`~/src`, `~/notes.txt`) are bound writable again, as
 * are writable folders inside a hidden entry (a root `~/.dotfiles`). A new entry at HOME's top
 * level cannot be made. Undefined when no writable folder holds HOME, or HOME is not a folder
 * (a missing HOME is not made: a program may then make it, and its start-up files).
 *
 * @param home HOME's real path
 * @param writable real absolute writable folders
 */
export function homeCover(home: string, writable: readonly string[]): HomeCover | undefined {
  if (!home || home === "/" || !writable.some((w) => within(home, w))) return undefined;
  // A HOME that is not a folder (missing) has nothing to keep; bwrap would not start.
  if (kindOf(home) !== "dir") return undefined;
  const args = ["--ro-bind-try", home, home];
  noteContents(home);
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(home)].map((e) => e.name).sort();
  } catch {
    // unreadable: HOME stays read-only whole
  }
  for (const name of names) {
    if (name.startsWith(".") || HOME_KEPT.has(name)) continue;
    const p = join(home, name);
    const k = kindOf(p);
    // A symlink stays as it is: where it leads is writable only if a writable folder holds it.
    if (k === "dir" || k === "file") args.push("--bind-try", p, p);
  }
  const open = writable.filter((w) => homeDotEntry(w, home) !== undefined).sort();
  for (const w of open) args.push("--bind-try", w, w);
  return { home, open, args };
}

/** Whether `path` lies where {@link homeCover} keeps HOME read-only. */
export function underHomeCover(path: string, cover: HomeCover | undefined): boolean {
  if (!cover) return false;
  if (path === cover.home) return true;
  return homeDotEntry(path, cover.home) !== undefined &&
    !cover.open.some((w) => within(path, w));
}
