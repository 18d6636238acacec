/**
 * The OS sandbox (SPEC S8.3): every program started on a model's behalf runs inside
 * bubblewrap (`bwrap`). Deno's permissions stop at a child process; this is what stops it.
 *
 * - `read-only`: the whole filesystem read-only; a private, empty temp folder (a tmpfs at the
 *   system temp path, TMPDIR pointing at it, gone when the call ends) is all it may write,
 *   besides magi's scratch files for the call (see `scratchDir`); what lies in the system temp
 *   folder comes back read-only where the call needs it (the roots, `SandboxScope.needed`).
 * - `workspace-write`: the roots and the session's own temp folder (`sessionTempDir`, TMPDIR
 *   inside) writable, never the shared system temp folder (other programs' repositories, hooks
 *   and sockets lie there: no per-call scan covers thousands of entries), except `.git` (its
 *   `config`, `hooks`, a worktree's `.git` file and common dir) and `.magi` of the repositories there,
 *   HOME and its hidden top-level entries when HOME is writable (see `homeCover`), and magi's
 *   own folders and what it runs later (`SandboxScope.ownDirs`, see `protectedPaths`), what the
 *   protected git configs include and their `core.hooksPath`; a git dir's missing `commondir` or
 *   `config.worktree` a call made is removed when it ends (`Wrap.absent`, `trackLaunches`).
 * - every mode: credential stores, `sandbox.deny_read` and magi's own files hidden (an empty
 *   folder or an empty file in their place); its own PID namespace (it cannot see or signal
 *   another process), IPC and UTS namespaces, a new session (no TIOCSTI into the terminal),
 *   no capabilities even when magi runs as root, no unix socket (none can be made: `seccomp.ts`;
 *   or, where a program may make them, none but the call's own: each covered, from the
 *   kernel's list and `socketsIn`, see `sandbox_restart.ts`), no named pipe outside, no network unless
 *   `sandbox.network` (a list of domains goes through `sandbox_proxy.ts`), no kernel keyring
 *   (a seccomp filter: `seccomp.ts`); it dies with magi.
 *
 * @module
 */
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { domainProxy } from "./sandbox_proxy.ts";
import { seccompBase64, seccompFile, withSeccomp } from "./seccomp.ts";
import { systemTempDir } from "../core/temp.ts";
import { sessionTempDir } from "./session_temp.ts";
import { boundSockets } from "./bound_sockets.ts";
import { sandboxRestart } from "./sandbox_restart.ts";
import {
  checkSocketCount,
  hiddenPaths,
  holdsOnlySockets,
  type HomeCover,
  homeCover,
  kindOf,
  listingsOnce,
  passwdHome,
  pinsFor,
  type Protect,
  protectedPaths,
  socketsIn,
  ticketCaches,
  underHomeCover,
  within,
} from "./sandbox_paths.ts";
import type { SandboxSettings } from "../config/sandbox_settings.ts";
import { xdgBase } from "../core/xdg.ts";
import { privateDir } from "../core/private.ts";
import { ownUid, SOCKETS_PARENT, socketsParent } from "../exec/unix_socket.ts";
import { type Reads, realNoted, recording } from "./sandbox_reads.ts";
import type { SandboxConfig } from "../config/sandbox_settings.ts";
import type { Restart } from "../core/types.ts";

export type { SandboxMode, SandboxSettings } from "../config/sandbox_settings.ts";
export { sandboxSettings } from "../config/sandbox_settings.ts";
export { CREDENTIAL_STORES } from "./sandbox_paths.ts";

/** What the sandbox must know about this session. */
export interface SandboxScope {
  /** Real absolute paths of the roots. */
  roots: readonly string[];
  /** magi's HOME (credential stores and "~/" in `deny_read` are under it). */
  home: string;
  /** magi's own config files and folders, state and sessions (absolute), hidden. */
  hidden: readonly string[];
  /** Folders that stay readable even under a hidden one (tools_dir, lua dirs, sockets' folder). */
  visible?: readonly string[];
  /** Unix sockets the child must reach (approvals socket, broker). */
  sockets?: readonly string[];
  /** The PATH to find bwrap on (default: the system folders, then magi's PATH). */
  path?: string;
  /**
   * Folders the call's programs need — tools folders, the tool links, magi's own code, Deno —
   * shown again read-only by the read-only sandbox when they lie in the system temp folder.
   */
  needed?: readonly string[];
  /**
   * magi's own config, state and cache folders, and what magi runs later outside the sandbox
   * (its code, Deno, hooks' and MCP servers' files: `runs_later.ts`): read-only wherever a root
   * holds them (a missing one is made as an empty read-only folder: pass only existing files).
   */
  ownDirs?: readonly string[];
  /** magi's own scratch folders (see {@link scratchDir}): writable in every mode. */
  scratch?: readonly string[];
  /**
   * The home folder `/etc/passwd` gives magi's uid (default: read there, `passwdHome`): its
   * credential stores are hidden as HOME's.
   */
  userHome?: string;
}

/**
 * Turns a program and its arguments into the command that runs them inside the sandbox.
 * `mountPoints`: the empty folders bwrap makes on the host for this command (a missing
 * `.magi` or `.git/hooks` kept read-only); they stay (see {@link releaseMountPoints}).
 */
export type Wrap = (
  program: string,
  args: string[],
  opts?: WrapOptions,
) => {
  program: string;
  args: string[];
  env?: Record<string, string>;
  mountPoints?: string[];
  /**
   * The sockets it covers with an empty file. One that went away while bwrap set the sandbox
   * up, in a folder the sandbox may write, is left as an empty file on the host (bwrap makes
   * the mount point): {@link trackLaunches}' `release` removes it, so that a server binding
   * that path again does not meet `EADDRINUSE`.
   */
  covers?: string[];
  /** Files git reads that were missing (`Protect` "absent"): removed if made, once it ended. */
  absent?: string[];
  /** Started again when a socket it covers went away while bwrap set it up. */
  restart?: Restart;
};

/** What one command of a call needs beyond the session's settings. */
export interface WrapOptions {
  /**
   * The program must reach the call's own unix sockets (approvals, the permission broker): it
   * may make unix sockets, as with `sandbox.unix_sockets` true, and every other socket is
   * covered by a mount. A tools folder's program (`tools/README.md`: `MAGI_APPROVAL_SOCK`).
   */
  ownSockets?: boolean;
}

/**
 * Empty folders the sandbox made as mount points, and how many commands still use each.
 */
const madeMountPoints = new Map<string, number>();

/** Counts a command's use of the mount points it makes (or that an earlier one made). */
function useMountPoints(paths: readonly string[]): string[] {
  for (const p of paths) madeMountPoints.set(p, (madeMountPoints.get(p) ?? 0) + 1);
  return [...paths];
}

/**
 * Ends a command's use of its mount points. The empty folders stay on the host: removing a
 * folder that is a mount point in another process's sandbox (a second magi in the same
 * repository) lazily detaches the read-only cover there (Linux ≥ 3.18), and the program
 * inside could then create `.git/hooks/pre-commit`. An empty `.git/hooks` or `.magi` runs
 * nothing; a detached cover would.
 */
export function releaseMountPoints(paths: readonly string[]): void {
  for (const p of paths) {
    const n = (madeMountPoints.get(p) ?? 1) - 1;
    if (n > 0) madeMountPoints.set(p, n);
    else madeMountPoints.delete(p);
  }
}

/**
 * A launcher whose commands' mount points are released by `release()` (call it once the
 * commands have ended: a sandbox's processes end with its first one, in its PID namespace).
 */
export function trackLaunches(wrap: Wrap | undefined): { wrap?: Wrap; release(): void } {
  if (!wrap) return { release: () => {} };
  const made: string[] = [];
  const covers: { path: string; since: number }[] = [];
  const absent = new Set<string>();
  return {
    wrap: (program, args, opts) => {
      const command = wrap(program, args, opts);
      made.push(...command.mountPoints ?? []);
      const since = Date.now() - 1000;
      for (const path of command.covers ?? []) covers.push({ path, since });
      for (const p of command.absent ?? []) absent.add(p);
      return command;
    },
    release: () => {
      releaseMountPoints(made.splice(0));
      for (const { path, since } of covers.splice(0)) {
        if (!madeMountPoints.has(path)) removeLeftCover(path, since);
      }
      removeMade([...absent]);
      absent.clear();
    },
  };
}

/** Removes the empty file bwrap made where a covered socket went away (see `Wrap`'s `covers`). */
function removeLeftCover(path: string, since: number): void {
  try {
    const info = Deno.lstatSync(path);
    if (info.isFile && info.size === 0 && (info.mtime?.getTime() ?? 0) >= since) {
      Deno.removeSync(path);
    }
  } catch {
    // gone, or still a socket's: nothing left behind
  }
}

/**
 * Removes what a sandboxed program made where a git dir's missing `commondir` or
 * `config.worktree` belongs (git never makes one in a repository's own git dir): git would
 * take its config and hooks from where it points, outside any sandbox. Called once the
 * call's programs have ended (they die with the sandbox's first process).
 */
function removeMade(paths: readonly string[]): void {
  for (const p of paths) {
    try {
      Deno.lstatSync(p);
    } catch {
      continue; // still missing
    }
    try {
      Deno.removeSync(p, { recursive: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/** The `sandbox` config value's object form (in sandbox_settings.ts, below the policy). */
export type { SandboxConfig } from "../config/sandbox_settings.ts";

/** Where bwrap is looked for when no PATH is given: the system folders, then magi's PATH. */
const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"];

/**
 * Finds `bwrap` on a PATH, skipping folders a sandboxed program could write (a bwrap planted
 * there would start outside the sandbox); undefined when it is not there.
 *
 * @param avoid real absolute folders whose insides are not searched (the roots, the temp folder)
 */
export function findBwrap(path: string, avoid: readonly string[] = []): string | undefined {
  const key = [path, ...avoid].join("\0");
  if (!found.has(key)) found.set(key, lookUp(path, avoid));
  return found.get(key);
}

/** Where bwrap was found, per PATH and folders avoided: it does not move during a session. */
const found = new Map<string, string | undefined>();

function lookUp(path: string, avoid: readonly string[]): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    try {
      const candidate = join(dir, "bwrap");
      const at = Deno.realPathSync(candidate);
      if (avoid.some((a) => within(at, a))) continue;
      if (Deno.statSync(at).isFile) return at;
    } catch {
      // not here
    }
  }
  return undefined;
}

function defaultPath(): string {
  return [...SYSTEM_DIRS, envPath()].join(delimiter);
}

/** The system's folders of daemons' sockets. */
const RUN_DIRS = ["/run", "/var/run"];

/** The namespaces and limits every sandboxed call gets. */
function isolation(network: boolean): string[] {
  return [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(network ? [] : ["--unshare-net"]),
    "--new-session",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
  ];
}

/**
 * bwrap's arguments for one call, before `--` and the command. Later mounts cover earlier
 * ones: the system read-only, then the temp folder, the roots, what stays read-only inside
 * them, what is hidden, what must stay visible under a hidden folder, and the sockets.
 *
 * Built once per session's settings, scope and mode and reused while nothing they were read
 * from changed (one `stat` per folder looked at: see `sandbox_reads.ts`), so a socket, a
 * credential store or a repository that appears between two calls is covered by the second.
 *
 * @param mountPoints receives the empty folders bwrap makes on the host for this command
 * @param filtered the program cannot make a unix socket (`seccomp.ts`): no socket is covered,
 *   only named pipes (the kernel's list of sockets is not read, the folders are searched for
 *   pipes alone)
 */
export function bwrapArgs(
  settings: SandboxSettings,
  scope: SandboxScope,
  mode: "read-only" | "workspace-write",
  mountPoints: string[] = [],
  covers: string[] = [],
  churned: readonly string[] = [],
  absent: string[] = [],
  filtered = false,
): string[] {
  const made = builtArgs(settings, scope, mode, churned, filtered);
  mountPoints.push(...made.missing);
  covers.push(...made.covers);
  absent.push(...made.absent);
  // One an earlier command made, still in use: counted too.
  for (const p of made.covered) if (madeMountPoints.has(p)) mountPoints.push(p);
  return [...made.args];
}

/** bwrap's arguments as built, with the protected paths that need counting as mount points. */
interface Built {
  args: string[];
  /** Missing folders bwrap makes on the host. */
  missing: string[];
  /** Existing protected paths (mount points an earlier command may have made). */
  covered: string[];
  /** The sockets and socket folders covered: bwrap fails when one goes away meanwhile. */
  covers: string[];
  /** Missing files git reads from a git dir, removed when made (`Protect` "absent"). */
  absent: string[];
}

/**
 * What the arguments are made of, but for what is read from the shared temp folder's listing
 * (which other programs change all the time): that is read again on every call, folder by
 * folder from cached listings, so its changes do not void the rest.
 */
interface Facts {
  mode: "read-only" | "workspace-write";
  /** The program cannot make a unix socket: only named pipes are covered. */
  filtered: boolean;
  /** Up to the pins: the system, the temp folder, the roots. */
  head: string[];
  /** The writable folders, and the outermost of them (workspace-write). */
  writable: string[];
  outer: string[];
  protects: Protect[];
  pins: string[];
  /** Hiding the credential stores and magi's own files, and the folders of those emptied. */
  hidden: string[];
  emptied: string[];
  /** The folders of magi's sockets, emptied whole. */
  parents: string[];
  /** Socket folders to empty and sockets to cover, but for the temp folder's. */
  folders: string[];
  sockets: string[];
  /** The visible and scratch folders. */
  shown: string[];
  /** The call's own sockets and read-only re-mounts. */
  tail: string[];
  isolation: string[];
  /** The shared temp folder, when its sockets are looked for on every call. */
  temp?: string;
  /**
   * The writable folders (read-only ones in the read-only sandbox) inside magi's folders of
   * sockets (`parents`): the session's temp folder, bound again after those are emptied.
   */
  reopened: string[];
  home: string;
  ownDirs: string[];
  /** The call's own sockets (real paths) and the folders of sockets covered whole. */
  ownSockets: string[];
  skip: string[];
  /**
   * The read-only sandbox's private temp folder and what of the system's comes back in it
   * (roots, needed folders): a socket elsewhere in the temp folder is out of sight already.
   */
  privateTemp?: { temp: string; shown: string[] };
  /** The folders and sockets the call is given: roots, needed, visible, scratch, own sockets. */
  given: string[];
  /** The temp folders whose Kerberos ticket caches are hidden (read on every call). */
  temps: string[];
  /** HOME kept read-only but for its visible entries, when a writable folder holds it. */
  homeRo?: HomeCover;
}

/** Facts gathered, per settings, scope, mode and temp folder, with what they were read from. */
const gathered = new Map<string, { facts: Facts; reads: Reads }>();
const GATHERED_KEPT = 16;

let built = 0;

/** How many times the sandbox's facts were gathered rather than reused (tests, benchmarks). */
export function sandboxArgsBuilt(): number {
  return built;
}

function builtArgs(
  settings: SandboxSettings,
  scope: SandboxScope,
  mode: "read-only" | "workspace-write",
  churned: readonly string[],
  filtered: boolean,
): Built {
  const key = JSON.stringify([settings, scope, mode, systemTempDir(), filtered]);
  let facts = gathered.get(key);
  if (!facts || !facts.reads.unchanged()) {
    gathered.delete(key);
    built++;
    const { value, reads } = recording(() => gather(settings, scope, mode, filtered));
    facts = { facts: value, reads };
    // A reading that saw a change in the same clock tick is not kept (it could miss another).
    if (reads.settled) {
      gathered.set(key, facts);
      if (gathered.size > GATHERED_KEPT) gathered.delete(gathered.keys().next().value!);
    }
  }
  return assemble(facts.facts, churned);
}

/** The kernel's lists of keys and of their owners, covered by an empty file. */
const PROC_KEYS = ["/proc/keys", "/proc/key-users"];

function gather(
  settings: SandboxSettings,
  scope: SandboxScope,
  mode: "read-only" | "workspace-write",
  filtered: boolean,
): Facts {
  const temp = realTemp();
  const head = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  // The kernel's key lists name every key of the user (a Kerberos ticket's, a VPN's).
  for (const p of PROC_KEYS) if (kindOf(p) === "file") head.push("--ro-bind", "/dev/null", p);
  const roots = [...new Set(scope.roots)].filter((r) => kindOf(r) === "dir");
  let writable: string[] = [];
  let outer: string[] = [];
  let protects: Protect[] = [];
  let homeRo: HomeCover | undefined;
  if (mode === "read-only") {
    // A private, empty temp folder in place of the system's (another session's files and
    // sockets are there); the roots under it come back read-only, and so do the folders the
    // call's program needs (`scope.needed`: tools folders, the tool links, magi's own code).
    head.push("--tmpfs", temp, "--setenv", "TMPDIR", temp);
    for (const n of scope.needed ?? []) {
      if (within(n, temp) && kindOf(n) === "dir") head.push("--ro-bind-try", n, n);
    }
    for (const r of roots) if (within(r, temp)) head.push("--ro-bind", r, r);
  } else {
    // The roots and the session's own temp folder; the shared one stays read-only (but for
    // the roots in it): other programs' repositories and sockets lie there.
    const own = sessionTempDir();
    writable = [...new Set([own, ...roots])];
    // A folder inside another writable one is writable already: one mount fewer.
    outer = writable.filter((d) => !writable.some((o) => o !== d && within(d, o)));
    for (const dir of outer) head.push("--bind", dir, dir);
    head.push("--setenv", "TMPDIR", own);
    // HOME inside a writable folder: HOME and its hidden entries read-only (start-up files).
    homeRo = homeCover(realOr(scope.home), writable);
    protects = protectedPaths(writable, scope.home, [], scope.ownDirs ?? []);
  }
  const hidden: string[] = [];
  const emptied: string[] = [];
  const keep = [
    ...roots,
    ...(scope.needed ?? []),
    ...(scope.visible ?? []),
    ...(scope.scratch ?? []),
  ];
  const userHome = scope.userHome ?? passwdHome();
  // magi's private folder of sockets is covered whole below: what is hidden inside it (the
  // seccomp filters) needs no mount of its own, and could not be remounted under that cover.
  const wholly = socketParents(temp);
  // What is hidden inside a writable folder: the folders down to it are pinned (mount points
  // cannot be renamed), or a call would move the folder aside and the next call read it there.
  const covered: Protect[] = [];
  for (const p of hiddenPaths(scope.home, settings.denyRead, scope.hidden, keep, userHome)) {
    if (wholly.some((w) => within(p, w))) continue;
    const k = kindOf(p);
    if (k === "dir") {
      hidden.push("--tmpfs", p);
      emptied.push(p);
    } else if (k === "file") hidden.push("--ro-bind", "/dev/null", p);
    // A symlink was resolved by hiddenPaths; a missing path has nothing to read.
    if (k === "dir" || k === "file") covered.push({ path: p, kind: k });
  }
  // Every unix socket is a way out: hide those in the system's run folder, HOME and (when it is
  // shared) the temp folder; the call's own sockets are bound again below. A program that
  // cannot make one (`filtered`) reaches none: the search is for named pipes alone, which it
  // may open for writing through a read-only mount and the kernel lists nowhere.
  const own = new Set((scope.sockets ?? []).map(realOr));
  // Deep enough for /run/user/UID/bus, ~/.docker/run/docker.sock, /tmp/tmux-UID/default.
  const scanned = new Map<string, number>();
  for (const d of RUN_DIRS) scanned.set(realOr(d), 4);
  if (!scanned.has(realOr(scope.home))) scanned.set(realOr(scope.home), 3);
  const shared = mode === "workspace-write" && !scanned.has(temp) ? temp : undefined;
  // The read-only sandbox's temp folder is its own; the roots in the system's come back, and
  // are searched as the shared one is (for sockets bound in another network namespace, which
  // the kernel's list for this one leaves out).
  if (mode === "read-only") {
    for (const r of roots) if (within(r, temp) && !scanned.has(r)) scanned.set(r, 2);
  }
  // Every session's sockets lie in one folder per user: one empty folder covers them all
  // (the read-only sandbox's own temp folder is empty already), and the scan skips it.
  const skip = wholly;
  const parents = skip.filter((p) => !(mode === "read-only" && within(p, temp)));
  const reopened = (mode === "read-only" ? roots : outer)
    .filter((d) => parents.some((p) => d !== p && within(d, p)));
  const ways = socketsIn(
    [...scanned].map(([dir, depth]) => ({ dir, depth })),
    own,
    new Set(skip),
    false,
    filtered,
  );
  // The visible and scratch folders are bound before the sockets are covered (a socket in
  // them is covered too); the call's own sockets after (one the kernel lists is bound again).
  const shown: string[] = [];
  for (const v of scope.visible ?? []) if (kindOf(v) === "dir") shown.push("--ro-bind-try", v, v);
  for (const w of scope.scratch ?? []) if (kindOf(w) === "dir") shown.push("--bind-try", w, w);
  const tail: string[] = [];
  for (const s of scope.sockets ?? []) if (kindOf(s) === "file") tail.push("--bind", s, s);
  // Read-only last: the visible folders and sockets above needed their mount points made.
  for (const p of emptied) tail.push("--remount-ro", p);
  const reshown = mode === "read-only"
    ? [...roots, ...(scope.needed ?? []), ...(scope.scratch ?? [])].filter((d) => within(d, temp))
    : [];
  return {
    privateTemp: mode === "read-only" ? { temp, shown: reshown } : undefined,
    given: [
      ...roots,
      ...(scope.needed ?? []),
      ...(scope.visible ?? []),
      ...(scope.scratch ?? []),
      ...own,
    ],
    shown,
    mode,
    filtered,
    head,
    writable,
    outer,
    protects,
    pins: pinsFor([...protects, ...covered], outer),
    hidden,
    emptied,
    parents,
    folders: ways.folders,
    sockets: ways.sockets,
    tail,
    isolation: isolation(settings.network !== false),
    temp: shared,
    reopened,
    home: scope.home,
    ownDirs: [...scope.ownDirs ?? []],
    ownSockets: [...own],
    skip,
    temps: [...new Set([temp, realOr("/tmp")])],
    homeRo,
  };
}

/**
 * The arguments from gathered facts and the shared temp folder's listing, read now: its
 * sockets (two levels down; the folder is read-only, but a socket there is still a way out).
 */
function assemble(f: Facts, churned: readonly string[] = []): Built {
  const { protects, pins } = f;
  let folders = f.folders;
  let sockets = f.sockets;
  if (f.temp) ({ folders, sockets } = tempScan(f, f.temp));
  // Folders where sockets came and went while an earlier try was set up: emptied whole.
  const wholly = churned.filter((d) => mayEmpty(f, d));
  if (wholly.length > 0) {
    folders = [
      ...new Set([...folders.filter((d) => !wholly.some((w) => within(d, w))), ...wholly]),
    ];
    sockets = sockets.filter((p) => !wholly.some((w) => within(p, w)));
  }
  if (!f.filtered) ({ sockets, folders } = withBoundSockets(f, sockets, folders));
  else checkSocketCount(sockets.length + folders.length);
  const args = [...f.head];
  const missing: string[] = [];
  const covered: string[] = [];
  // What a hidden folder's empty tmpfs covers later needs no mount of its own (each bind costs
  // bwrap a reading of the mount table): a protected path in magi's hidden state, say.
  const hidden = (p: string) => f.emptied.some((e) => within(p, e));
  // "-try": a folder another process removes meanwhile is skipped, not a failed call.
  // What HOME's read-only cover holds is read-only already: a pin there would open it again,
  // and a missing folder there cannot be made.
  const held = (p: string) => underHomeCover(p, f.homeRo);
  // Each bind shows the host's folder afresh: the pins above HOME first, then HOME's cover,
  // then the pins inside it.
  const inHome = (p: string) => f.homeRo !== undefined && within(p, f.homeRo.home);
  // What lies in a folder bound again after magi's folders of sockets are emptied comes after.
  const later = (p: string) => f.reopened.some((r) => within(p, r));
  for (const dir of pins) {
    if (!hidden(dir) && !held(dir) && !inHome(dir) && !later(dir)) {
      args.push("--bind-try", dir, dir);
    }
  }
  args.push(...f.homeRo?.args ?? []);
  for (const dir of pins) {
    if (!hidden(dir) && !held(dir) && inHome(dir) && !later(dir)) {
      args.push("--bind-try", dir, dir);
    }
  }
  const absent: string[] = [];
  const madeFiles: string[] = [];
  const protect = (p: Protect) => {
    if (hidden(p.path) || held(p.path)) return;
    if (p.kind === "absent") absent.push(p.path);
    else if (p.kind === "missing-file") {
      // An empty read-only file bwrap makes on the host, removed when the call ends (`covers`).
      // Counted as a mount point too: not removed while another command of magi's uses it.
      args.push("--ro-bind", "/dev/null", p.path);
      madeFiles.push(p.path);
      missing.push(p.path);
    } else if (p.kind === "missing-dir") {
      // bwrap makes the folder on the host: counted, and removed once no command uses it.
      args.push("--tmpfs", p.path, "--remount-ro", p.path);
      missing.push(p.path);
    } else {
      args.push("--ro-bind-try", p.path, p.path);
      covered.push(p.path);
    }
  };
  for (const p of protects) if (!later(p.path)) protect(p);
  args.push(...f.hidden);
  for (const c of ticketCaches(f.temps)) args.push("--ro-bind-try", "/dev/null", c);
  for (const dir of f.parents) args.push("--tmpfs", dir);
  // The session's temp folder, in magi's folder of sockets, with what stays read-only in it.
  for (const dir of f.reopened) {
    args.push(f.mode === "read-only" ? "--ro-bind" : "--bind", dir, dir);
  }
  for (const dir of pins) if (later(dir) && !hidden(dir)) args.push("--bind-try", dir, dir);
  for (const p of protects) if (later(p.path)) protect(p);
  args.push(...f.shown);
  for (const sock of sockets) args.push("--ro-bind", "/dev/null", sock);
  args.push(...f.tail);
  // An empty folder over one that holds only sockets costs far less than a mount per socket.
  // These come last: each bind mount makes bwrap read the whole mount table again, so binds
  // after a hundred such folders would cost a millisecond each. Nothing is inside them (they
  // hold only sockets), and one inside a hidden folder is covered already.
  const emptiedFolders = folders.filter((dir) => !f.emptied.some((e) => within(dir, e)));
  for (const dir of emptiedFolders) args.push("--tmpfs", dir);
  args.push(...f.isolation);
  return { args, missing, covered, covers: [...sockets, ...emptiedFolders, ...madeFiles], absent };
}

/** What the shared temp folder adds: its sockets and named pipes (two levels down). */
interface TempScan {
  folders: string[];
  sockets: string[];
}

/**
 * The last scan of the shared temp folder per gathered facts, with what it read: reused while
 * none of it changed (one `stat` per folder). Only where the program cannot make unix sockets:
 * otherwise a socket found dead since changes the scan with no file changing
 * (`sandbox_dead.ts`). The shared temp folder is read-only in every mode (the session's own
 * temp folder is the writable one), so its repositories need no protected paths.
 */
const tempScans = new WeakMap<Facts, { scan: TempScan; reads: Reads }>();

/**
 * The shared temp folder's sockets (two levels; in `filtered` facts its named pipes alone), read
 * now or reused ({@link tempScans}).
 */
function tempScan(f: Facts, temp: string): TempScan {
  const kept = f.filtered ? tempScans.get(f) : undefined;
  if (kept && kept.reads.unchanged()) return kept.scan;
  const scan = () =>
    listingsOnce(() => {
      const ways = socketsIn(
        [{ dir: temp, depth: 2 }],
        new Set(f.ownSockets),
        new Set(f.skip),
        !f.filtered,
        f.filtered,
      );
      return {
        folders: [...new Set([...f.folders, ...ways.folders])],
        sockets: [...new Set([...f.sockets, ...ways.sockets])],
      };
    });
  if (!f.filtered) return scan();
  const { value, reads } = recording(scan);
  if (reads.settled) tempScans.set(f, { scan: value, reads });
  else tempScans.delete(f);
  return value;
}

/**
 * Whether a folder is small enough to list on every call for {@link holdsOnlySockets}: no
 * sub-folders (a link count of 2) and one block of entries at most. A crowded `/tmp` changes all
 * the time, and reading it again would cost more than the mount it might save.
 */
function small(dir: string): boolean {
  try {
    const st = Deno.statSync(dir);
    return st.nlink === 2 && st.size <= 4096;
  } catch {
    return false;
  }
}

/**
 * Whether a folder may be shown empty (a tmpfs over it) for a call: it lies in no writable
 * folder (what the program wrote there would be lost) and holds none of the folders and
 * sockets the call is given (roots, needed, visible, scratch, its own sockets).
 */
function mayEmpty(f: Facts, dir: string): boolean {
  if (dir === "/" || f.writable.some((w) => within(dir, w))) return false;
  return !f.given.some((g) => within(g, dir));
}

/**
 * `sockets` with every socket the kernel lists as bound in this network namespace
 * (`bound_sockets.ts`, read at each call: any folder, any depth), each looked at now — gone or
 * no longer a socket, it is left out (bwrap would fail making its mount point). Left out too:
 * the call's own, those of bwrap's own `/dev` and `/proc`, those under a folder emptied or
 * covered whole, and in the read-only sandbox those of the system temp folder that is not shown
 * (its temp folder is a private one).
 *
 * @throws SandboxSetupError when more sockets are to be hidden than one call may hide
 */
function withBoundSockets(
  f: Facts,
  sockets: string[],
  folders: string[],
): { sockets: string[]; folders: string[] } {
  const own = new Set(f.ownSockets);
  const whole = ["/dev", "/proc", ...f.emptied, ...f.parents, ...folders, ...f.skip];
  const out = new Set(sockets);
  const hiddenTemp = (path: string) =>
    f.privateTemp !== undefined && within(path, f.privateTemp.temp) &&
    !f.privateTemp.shown.some((d) => within(path, d));
  const emptied = new Set<string>();
  for (const path of boundSockets()) {
    if (out.has(path) || own.has(path) || hiddenTemp(path)) continue;
    if (whole.some((d) => within(path, d)) && !f.reopened.some((r) => within(path, r))) continue;
    try {
      if (!Deno.lstatSync(path).isSocket) continue;
    } catch {
      continue; // bound, then removed: nothing to reach by that path
    }
    // A folder of nothing but sockets (an agent's, a server's), read-only here: one empty
    // folder over it costs bwrap less than a mount per socket.
    const dir = dirname(path);
    if (emptied.has(dir)) continue;
    if (mayEmpty(f, dir) && small(dir) && holdsOnlySockets(dir)) emptied.add(dir);
    else out.add(path);
  }
  const more = [...emptied].filter((d) => !out.has(d));
  const all = [...out].filter((p) => !emptied.has(dirname(p)));
  checkSocketCount(all.length + folders.length + more.length);
  return { sockets: all, folders: [...folders, ...more] };
}

/**
 * This user's folders of sockets (`socketsParent`) that exist, in the temp folder and in /tmp
 * (a session with another TMPDIR keeps its sockets there). Another user's is private to them.
 */
function socketParents(temp: string): string[] {
  const out = new Set<string>();
  const uid = ownUid();
  if (uid === undefined) return [];
  for (const dir of new Set([temp, realOr("/tmp")])) {
    const mine = join(dir, `${SOCKETS_PARENT}${uid}`);
    if (kindOf(mine) === "dir") out.add(mine);
  }
  return [...out];
}

/**
 * The launcher for one call. With `network` a list of domains, the program runs behind
 * `sandbox_bridge.js` (started by Deno inside the sandbox) and the domain proxy outside it.
 *
 * Unless `sandbox.unix_sockets` is true or a command asks for its own sockets
 * ({@link WrapOptions}), the program cannot make a unix socket (`seccomp.ts`): no socket
 * outside is covered (none is in reach), nor are the call's own bound in. The bridge, which
 * must reach the proxy's socket, runs without that refusal and sets it on the program it
 * starts (`seccomp_exec.js`); bwrap then loads the keyrings' filter alone.
 *
 * @throws Error when a domain list is asked for but no Deno can start the bridge
 */
export function sandboxLauncher(
  settings: SandboxSettings,
  scope: SandboxScope,
  mode: "read-only" | "workspace-write",
): Wrap {
  const bwrap = findBwrap(scope.path ?? defaultPath(), [...scope.roots, realTemp()]) ?? "bwrap";
  // The keyrings no namespace takes away, and unix sockets (see seccomp.ts): a seccomp filter.
  const filters = filterDir();
  const keysOnly = seccompFile(filters);
  const noUnix = seccompFile(filters, { unix: true });
  const domains = Array.isArray(settings.network) ? settings.network : undefined;
  const proxy = domains ? domainProxy(domains) : undefined;
  const bridge = proxy ? bridgeCommand() : [];
  const s: SandboxSettings = proxy ? { ...settings, network: false } : settings;
  // The bridge's script and the Deno that runs it must be there in the read-only sandbox too.
  const needed = proxy
    ? [
      ...(scope.needed ?? []),
      dirname(fileURLToPath(new URL("./sandbox_bridge.js", import.meta.url))),
      dirname(Deno.execPath()),
    ]
    : scope.needed;
  // A program that makes unix sockets reaches the call's own; one that cannot, none (the
  // bridge still reaches the proxy's).
  const scopes = {
    makes: {
      ...scope,
      sockets: [...(scope.sockets ?? []), ...proxy ? [proxy.socket] : []],
      needed,
    },
    filtered: { ...scope, sockets: proxy ? [proxy.socket] : [], needed },
  };
  return (program, rest, opts) => {
    const makes = s.unixSockets === true || opts?.ownSockets === true;
    const sc = makes ? scopes.makes : scopes.filtered;
    // Behind the bridge: the program's own filter, or "-" for none beyond bwrap's.
    const inner = proxy
      ? [...bridge, proxy.socket, makes ? "-" : seccompBase64({ unix: true }), "--"]
      : [];
    const filter = makes || proxy ? keysOnly : noUnix;
    const made: string[] = [];
    const absent: string[] = [];
    const make = (churned: readonly string[] = []) => {
      const covers: string[] = [];
      const args = [
        ...bwrapArgs(s, sc, mode, made, covers, churned, absent, !makes),
        // The bridge as the sandbox's first process: bwrap's own would hold only the keyrings'
        // filter, and a program may trace it (same user, dumpable) to make a socket through it.
        ...proxy ? ["--as-pid-1"] : [],
        "--",
        ...inner,
        program,
        ...rest,
      ];
      return { ...withSeccomp({ program: bwrap, args }, filter), covers };
    };
    const first = make();
    return {
      program: first.program,
      args: first.args,
      mountPoints: useMountPoints(made),
      covers: [...first.covers],
      absent: [...new Set(absent)],
      restart: sandboxRestart(first.covers, make),
    };
  };
}

/** How to start the bridge inside the sandbox: Deno running `sandbox_bridge.js`. */
function bridgeCommand(): string[] {
  const url = new URL("./sandbox_bridge.js", import.meta.url);
  const exe = Deno.execPath();
  if (url.protocol !== "file:" || !/^deno(\.exe)?$/.test(basename(exe))) {
    throw new Error(
      'config key "sandbox.network": a list of allowed domains needs magi run by Deno ' +
        "(not the compiled binary yet); use true or false",
    );
  }
  return [exe, "run", "-A", "--no-config", "--no-lock", "--quiet", fileURLToPath(url)];
}

const probes = new Map<string, Promise<string | undefined>>();

/**
 * Why no sandbox can start here, or undefined when one can: not Linux, no bwrap, or bwrap
 * failing with the namespaces the sandbox uses (no user namespaces, a container that forbids
 * them). Checked once per PATH for the life of the process.
 *
 * @param path the PATH to look for bwrap on (default: the system folders, then magi's PATH)
 */
export function sandboxProblem(path?: string): Promise<string | undefined> {
  if (Deno.build.os !== "linux") {
    return Promise.resolve(
      `the sandbox needs Linux with bubblewrap; this is ${Deno.build.os}`,
    );
  }
  const bwrap = findBwrap(path ?? defaultPath(), [realTemp()]);
  if (!bwrap) return Promise.resolve('bwrap is not on PATH (Debian package "bubblewrap")');
  let probe = probes.get(bwrap);
  if (!probe) {
    const args = [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      realTemp(),
      ...isolation(false),
    ];
    probe = probeBwrap(bwrap, args);
    probes.set(bwrap, probe);
  }
  return probe;
}

async function probeBwrap(bwrap: string, args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(bwrap, {
      args: [...args, "--", "true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return undefined;
    const why = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1);
    return `bwrap cannot start (exit status ${out.code}${why ? `: ${why}` : ""})`;
  } catch (error) {
    return `bwrap cannot start: ${(error as Error).message}`;
  }
}

/** The sandbox of the old `policy.sandbox` key, or undefined when it is off. */
export interface Sandbox {
  wrap: Wrap;
  /** Why bwrap cannot start here, or undefined when it can. */
  problem(): Promise<string | undefined>;
}

/**
 * The sandbox for a policy with `policy.sandbox` on: workspace-write over the policy's roots,
 * magi's config and state hidden, network as `policy.sandbox.network` says. Kept until the
 * gate picks the mode per call from {@link sandboxSettings}.
 *
 * @param path the PATH to find bwrap on (magi's own)
 * @param sockets the unix sockets the call's program must reach (see {@link sandboxSockets})
 */
export function sandboxFor(
  policy: {
    roots: readonly string[];
    env: Record<string, string>;
    sandbox: boolean | SandboxConfig;
  },
  path: string,
  sockets: readonly string[] = [],
): Sandbox | undefined {
  if (!policy.sandbox) return undefined;
  const config: SandboxConfig = typeof policy.sandbox === "object" ? policy.sandbox : {};
  const env = policy.env;
  const home = env.HOME ?? (passwdHome() || "/root");
  const config_ = xdgBase(env, "config", home);
  const state = xdgBase(env, "state", home);
  const settings: SandboxSettings = {
    mode: "workspace-write",
    network: config.network === true,
    denyRead: [],
  };
  const scope: SandboxScope = {
    roots: policy.roots,
    home,
    hidden: [join(config_, "magi", "config.jsonc"), join(state, "magi")],
    sockets,
    path,
  };
  const wrap = sandboxLauncher(settings, scope, "workspace-write");
  return { wrap, problem: () => sandboxProblem(path) };
}

/** The unix sockets a call's environment names: the approvals socket and the permission broker. */
export function sandboxSockets(env: Record<string, string>): string[] {
  const names = ["MAGI_APPROVAL_SOCK", "MAGI_PRIV", "DENO_PERMISSION_BROKER_PATH"];
  return [...new Set(names.map((n) => env[n]).filter((p) => p && isAbsolute(p)))];
}

function envPath(): string {
  try {
    return Deno.env.get("PATH") ?? "";
  } catch {
    return "";
  }
}

function realOr(path: string): string {
  return realNoted(path) ?? path;
}

function realTemp(): string {
  return realOr(systemTempDir());
}

let scratch: string | undefined;

/**
 * Where the seccomp filters are kept: `filters/` in this user's private folder of magi's
 * sockets (`socketsParent`), which every sandbox covers whole and where nothing is bound again
 * (the scratch and session temp folders are), and which every session's file builtins refuse
 * (`door.hidden`): no call can replace the filter a later call is started with. Not the scratch
 * folder: every sandbox binds that one writable (a call once swapped in an allow-all filter
 * there and read the keyring on its next call). One folder for all of the user's sessions (the
 * files are the same; each is written whole, then renamed). Without a private sockets folder,
 * the scratch folder.
 */
export function filterDir(): string {
  if (filters) return filters;
  const parent = socketsParent();
  let dir: string | undefined;
  try {
    if (parent) dir = privateDir(join(parent, "filters"));
  } catch {
    // not ours to make: the scratch folder, as before
  }
  return filters = dir ?? scratchDir();
}

let filters: string | undefined;

/**
 * magi's own scratch folder (private, made once per process, removed at exit): files magi
 * reads back from a sandboxed command, such as `run`'s last working folder. It stays writable
 * in the read-only sandbox. It lies in this user's private folder of magi's sockets
 * (`socketsParent`), which every sandbox covers whole, so a call reaches its own process's
 * scratch files (bound again) and never another session's (`$MAGI_SHOWN`, `$MAGI_ASK`).
 */
export function scratchDir(): string {
  if (scratch) return scratch;
  const parent = socketsParent();
  const dir = Deno.makeTempDirSync({ prefix: "magi-scratch-", ...parent ? { dir: parent } : {} });
  const real = Deno.realPathSync(dir);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(real, { recursive: true });
    } catch {
      // gone already
    }
  });
  return scratch = real;
}
