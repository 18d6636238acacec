/**
 * File builtins' bodies in a mount namespace that holds only the roots (SPEC S8.2, issue 13):
 * `read`, `write`, `edit` and `grep` run in a long-lived Deno process (`body_server.ts`) inside
 * bwrap, whose file system is an empty one but for the roots (read-only for `read` and `grep`),
 * the system's library folders, Deno and magi's own code (read-only), and bwrap's own `/dev`.
 * A folder swapped for a symlink between a check and a use can then only lead to what is
 * mounted: the class of escape is gone rather than checked (the checks in
 * `_race_free.ts` stay, behind it). Deno's permissions inside are the body Worker's
 * (read inside the roots, write only for a tool that writes), without `run`: no program is
 * mounted to start.
 *
 * One process per permission set, started on its first job (about 0.3 s) and kept while jobs
 * come (ended after 30 s without one, or when more than four are idle; it ends with magi:
 * `--die-with-parent`); jobs run concurrently in it, one JSON line each way. A job past its time limit or cancelled ends the process (and fails the jobs
 * still in it); the next job starts a new one.
 *
 * Used where it can start: Linux, a working bwrap (`sandboxProblem`), magi run by Deno from its
 * source (not the compiled binary: no `deno` to start), no comma in a root. Elsewhere, and if
 * the process cannot start, the body runs in its Worker as before ({@link bodyProcessProblem}).
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { Buffer } from "node:buffer";
import { fileURLToPath } from "node:url";
import type { BuiltinResult } from "./builtin.ts";
import { type BodyJob, thrownResult } from "./body_job.ts";
import { findBwrap, sandboxProblem } from "../../confinement/sandbox.ts";
import {
  type HiddenSet,
  homeCover,
  homeDotEntry,
  kindOf,
  passwdHome,
  protectedPaths,
  within,
} from "../../confinement/sandbox_paths.ts";
import { magiOwnDirs } from "../../policy/protected.ts";
import { sourceUrl } from "../../core/source_root.ts";

/** What a body process may touch: as a body Worker's permissions (`body_worker.ts`). */
export interface BodyAccess {
  read: string[];
  write: string[] | false;
  /**
   * Paths inside the writable roots mounted read-only over them (see {@link writeProtects}):
   * what git or magi runs later, which `write` and `edit` refuse, so no swap can aim a write there.
   */
  readOnly?: string[];
  /** What is hidden inside the roots (see {@link hiddenInside}): covered by empty ones. */
  hidden?: { path: string; kind: "dir" | "file" }[];
  /** Folders under a hidden one shown again, read-only. */
  visible?: string[];
}

/**
 * What stays read-only in a writing body's namespace: the paths the `workspace-write` sandbox
 * protects (`protectedPaths`: `.git/config`, `.git/hooks`, `.magi`, magi's own folders, HOME's
 * start-up files…) that exist, for the repositories at, above and below the roots. The shared
 * system temp folder is no default root (the session's own temp folder is: `sessionTempDir`),
 * so its other programs' repositories are outside the namespace altogether.
 *
 * @param roots real absolute paths the body may write
 */
export function writeProtects(
  roots: readonly string[],
  env: Record<string, string>,
  later: readonly string[] = [],
): string[] {
  const own = [...magiOwnDirs(env), ...later];
  // HOME unset (cron, `env -i`): the passwd home stands for it, as in the sandbox.
  const homeVar = env.HOME ?? passwdHome();
  const protects = protectedPaths(roots, homeVar, [], own);
  const out = protects.filter((p) => p.kind === "dir" || p.kind === "file").map((p) => p.path);
  // HOME's hidden entries that exist, when a root holds HOME (as the sandbox's `homeCover`).
  const home = homeVar ? realOr(homeVar) : "";
  const cover = homeCover(home, roots);
  if (cover) {
    noteless(() => {
      for (const e of Deno.readDirSync(home)) {
        const p = join(home, e.name);
        if (homeDotEntry(p, home) && !cover.open.some((w) => within(w, p))) out.push(p);
      }
    });
  }
  return [...new Set(out)].sort();
}

/** Runs `f`, a failure to read leaving the set as it is. */
function noteless(f: () => void): void {
  try {
    f();
  } catch {
    // unreadable
  }
}

/**
 * What the body's namespace hides inside its roots, as the sandbox does (`hiddenFor`): each
 * hidden path that exists there with its kind (an empty folder or file over it), and the
 * visible folders under them, shown again. Looked at on
 * each call: a store made since starts a new body process with it covered.
 */
export function hiddenInside(
  set: HiddenSet,
  roots: readonly string[],
): Pick<BodyAccess, "hidden" | "visible"> {
  const inRoots = (p: string) => roots.some((r) => within(p, r));
  const hidden: { path: string; kind: "dir" | "file" }[] = [];
  // (The temp folders' ticket caches are refused by name: listing a busy temp folder on every
  // call would cost more than the call.)
  const seen = new Set<string>();
  for (const h of set.entries) {
    if (seen.has(h.path) || !inRoots(h.path)) continue;
    seen.add(h.path);
    // A symlink's target is in the list too (resolved by hiddenEntries); a missing path has
    // nothing to read.
    const kind = h.kind ?? kindOf(h.path);
    if (kind === "dir" || kind === "file") hidden.push({ path: h.path, kind });
  }
  hidden.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const visible = set.visible.filter((v) => hidden.some((h) => within(v, h.path) && v !== h.path));
  return hidden.length > 0 ? { hidden, ...visible.length > 0 ? { visible } : {} } : {};
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** What running a job needs besides the job (as `BodyRun` of `body_worker.ts`). */
export interface ProcessRun {
  access: BodyAccess;
  /** Milliseconds; the process is ended a second after it. */
  timeoutMs: number;
  signal?: AbortSignal;
  said(chunk: Uint8Array | string): Promise<void>;
}

/** The system's library folders, mounted read-only (or as the symlinks they are). */
const LIBRARY_DIRS = ["/lib", "/lib64", "/lib32", "/libx32", "/usr/lib", "/usr/lib64"];
/** Deno's cache inside: an empty folder in bwrap's own `/dev` (never on the host). */
const DENO_DIR_INSIDE = "/dev/.magi-deno";

const SERVER = sourceUrl("lib/sources/builtins/body_server.ts");

let problem: Promise<string | undefined> | undefined;
let wanted = true;

/**
 * Turns body processes off (the bodies run in their Workers, as where none can start) or on
 * again: for benchmarks and tests that compare the two.
 */
export function useBodyProcesses(on: boolean): void {
  wanted = on;
}

/**
 * Why file builtins' bodies cannot run in a body process here, or undefined when they can
 * (checked once per process).
 */
export function bodyProcessProblem(): Promise<string | undefined> {
  if (!wanted) return Promise.resolve("body processes are turned off");
  return problem ??= (async () => {
    if (SERVER.protocol !== "file:") return "magi's code is not in files";
    if (!/^deno(\.exe)?$/.test(basename(Deno.execPath()))) return "magi is not run by Deno";
    const sandbox = await sandboxProblem();
    if (sandbox) return sandbox;
    // A bundle of magi has no body_server.ts beside it: its bodies stay in Workers.
    for (const p of [fileURLToPath(SERVER), ...codePaths()]) {
      try {
        Deno.statSync(p);
      } catch {
        return `${p} is missing`;
      }
    }
    return undefined;
  })();
}

/**
 * magi's own files the body process loads: its code (`lib/`), config, lock file and npm
 * packages, in the folder above this module that holds `deno.json`.
 */
function codePaths(): string[] {
  let top = dirname(fileURLToPath(SERVER));
  while (dirname(top) !== top) {
    try {
      Deno.statSync(join(top, "deno.json"));
      break;
    } catch {
      top = dirname(top);
    }
  }
  return ["lib", "deno.json", "deno.lock", "node_modules"].map((p) => join(top, p));
}

/**
 * The bwrap command of a body process with this access; undefined when a path cannot be given
 * to Deno (a comma in it) or bwrap is not found.
 */
export function bodyCommand(access: BodyAccess): { program: string; args: string[] } | undefined {
  const all = [...access.read, ...access.write || []];
  if (all.some((p) => p.includes(","))) return undefined;
  const bwrap = findBwrap(["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"].join(":"));
  if (!bwrap) return undefined;
  const exe = Deno.realPathSync(Deno.execPath());
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--clearenv",
    "--setenv",
    "NO_COLOR",
    "1",
    "--setenv",
    "DENO_DIR",
    DENO_DIR_INSIDE,
  ];
  for (const dir of LIBRARY_DIRS) {
    try {
      const st = Deno.lstatSync(dir);
      if (st.isSymlink) args.push("--symlink", Deno.readLinkSync(dir), dir);
      else if (st.isDirectory) args.push("--ro-bind", dir, dir);
    } catch {
      // not on this system
    }
  }
  args.push("--ro-bind", exe, exe);
  const code = codePaths();
  for (const p of code) args.push("--ro-bind", p, p);
  // The roots last but for /dev, outer ones first: a root inside another is mounted on it.
  const byDepth = (a: string, b: string) => a.split("/").length - b.split("/").length;
  const writable = new Set(access.write || []);
  for (const p of [...new Set(all)].sort(byDepth)) {
    args.push(writable.has(p) ? "--bind-try" : "--ro-bind-try", p, p);
  }
  for (const p of access.readOnly ?? []) args.push("--ro-bind-try", p, p);
  // What the sandbox hides, hidden here too: a symlink swapped in cannot lead there either.
  const emptied: string[] = [];
  for (const h of access.hidden ?? []) {
    if (h.kind === "dir") {
      args.push("--tmpfs", h.path);
      emptied.push(h.path);
    } else args.push("--ro-bind", "/dev/null", h.path);
  }
  for (const v of access.visible ?? []) args.push("--ro-bind-try", v, v);
  for (const p of emptied) args.push("--remount-ro", p);
  // Deno needs /proc/self/exe; in its own PID namespace /proc shows only its own processes.
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", DENO_DIR_INSIDE, "--chdir", "/");
  args.push("--", exe);
  const config = code.find((p) => p.endsWith("deno.json"))!;
  args.push(
    "run",
    "--quiet",
    "--no-prompt",
    "--no-check",
    "--frozen",
    "--cached-only",
    `--config=${config}`,
    `--allow-read=${[...new Set(all)].join(",")}`,
    ...(access.write ? [`--allow-write=${access.write.join(",")}`] : []),
    fileURLToPath(SERVER),
  );
  return { program: bwrap, args };
}

/** One job in flight in a body process. */
interface Pending {
  said(chunk: Uint8Array | string): void;
  /** undefined: the process never started (the job goes to the Worker). */
  finish(result: BuiltinResult | undefined): void;
}

/** Why body processes could not start, once one failed to (then Workers run the bodies). */
let failed: string | undefined;

/** Why the last body process that ended before it was ready failed; undefined: none did. */
export function bodyProcessFailure(): string | undefined {
  return failed;
}

/** A running body process and the jobs in it. */
interface BodyProcess {
  child: Deno.ChildProcess;
  /** Its access, as a key. */
  key: string;
  /** Replaced by one with a newer read-only set: ended once its last job ends. */
  retired: boolean;
  /** Ends it after a while without jobs; when its last job ended. */
  idleTimer?: ReturnType<typeof setTimeout>;
  idleSince?: number;
  write(line: string): Promise<void>;
  jobs: Map<number, Pending>;
  ended: boolean;
  /** Whether it said it is ready (its code loaded): one that ends before never started. */
  ready: boolean;
  /** The end of what it wrote to stderr (why it failed to start). */
  stderr: string;
  /** magi ended it (it did not fail by itself). */
  endedByMagi?: boolean;
}

const running = new Map<string, BodyProcess>();

/** How long an idle body process is kept for the next job, in milliseconds (as Workers). */
const IDLE_MS = 30_000;
/** At most this many body processes stay alive idle (each is a Deno: tens of MB). */
const IDLE_KEPT = 4;

/** Starts the idle clock of a process whose last job ended; ends the oldest idle beyond the cap. */
function idle(key: string, proc: BodyProcess): void {
  clearTimeout(proc.idleTimer);
  proc.idleTimer = setTimeout(() => end(key, proc, "[magi: the body process was idle]"), IDLE_MS);
  Deno.unrefTimer(proc.idleTimer as unknown as number);
  proc.idleSince = Date.now();
  const idlers = [...running].filter(([, p]) => p.jobs.size === 0)
    .sort(([, a], [, b]) => (a.idleSince ?? 0) - (b.idleSince ?? 0));
  for (const [k, p] of idlers.slice(0, Math.max(0, idlers.length - IDLE_KEPT))) {
    end(k, p, "[magi: the body process was idle]");
  }
}
let nextId = 1;

function start(key: string, full: string, access: BodyAccess): BodyProcess | undefined {
  const command = bodyCommand(access);
  if (!command) return undefined;
  const child = new Deno.Command(command.program, {
    args: command.args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // It must not keep magi alive; a job's own timer does while it runs.
  child.unref();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const proc: BodyProcess = {
    child,
    key: full,
    retired: false,
    jobs: new Map(),
    ended: false,
    ready: false,
    stderr: "",
    write: (line) => writer.write(encoder.encode(line + "\n")),
  };
  running.set(key, proc);
  readLines(child.stdout, (line) => onLine(proc, line)).finally(() => end(key, proc));
  readLines(child.stderr, (line) => proc.stderr = (proc.stderr + line + "\n").slice(-2000));
  child.status.then(() => end(key, proc), () => end(key, proc));
  return proc;
}

function onLine(proc: BodyProcess, line: string): void {
  let m: {
    id: number;
    said?: string;
    bytes?: string;
    done?: BuiltinResult;
    saidBytes?: string;
    error?: { name: string; message: string };
  };
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if ((m as { ready?: boolean }).ready) proc.ready = true;
  const job = proc.jobs.get(m.id);
  if (!job) return;
  if (m.said !== undefined) job.said(m.said);
  else if (m.bytes !== undefined) job.said(new Uint8Array(Buffer.from(m.bytes, "base64")));
  else if (m.done) {
    const said = m.saidBytes !== undefined
      ? new Uint8Array(Buffer.from(m.saidBytes, "base64"))
      : m.done.said;
    job.finish({ ...m.done, said });
  } else if (m.error) job.finish(thrownResult(m.error.name, m.error.message));
}

/** The process ended (or is ended): its jobs fail, and the next job starts a new one. */
function end(key: string, proc: BodyProcess, why?: string, endedByMagi = false): void {
  if (running.get(key) === proc) running.delete(key);
  clearTimeout(proc.idleTimer);
  if (!proc.ended) {
    proc.ended = true;
    try {
      proc.child.kill("SIGKILL");
    } catch {
      // gone already
    }
  }
  // Ended by magi (idle, replaced, closed, a job cancelled or out of time) — then, or in an
  // earlier call — is no sign that body processes cannot start here.
  if (why !== undefined || endedByMagi) proc.endedByMagi = true;
  const said = proc.stderr.trim().split("\n").at(-1);
  if (!proc.ready && !proc.endedByMagi) failed = said || "it ended before it was ready";
  const note = why ?? `[magi: the body process ended${said ? `: ${said}` : ""}]`;
  for (const job of [...proc.jobs.values()]) {
    const started = proc.ready || proc.endedByMagi;
    job.finish(started ? { said: "", isError: true, note } : undefined);
  }
  proc.jobs.clear();
}

async function readLines(
  stream: ReadableStream<Uint8Array>,
  line: (text: string) => void,
): Promise<void> {
  let buffered = "";
  try {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        line(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    }
  } catch {
    // the process ended
  }
}

/**
 * Runs one job in the body process of its access (started when none runs). Never throws for
 * what the body does: Deno's refusals, a throw, a time-out and cancellation come back as an
 * error result. Resolves to undefined when no body process can start for this access (the
 * caller runs the body in its Worker): no command for it, or one ended before it was ready
 * (then none is tried again: see {@link bodyProcessFailure}).
 */
export function runInBodyProcess(
  job: BodyJob,
  run: ProcessRun,
): Promise<BuiltinResult | undefined> {
  if (failed !== undefined) return Promise.resolve(undefined);
  // One process per permission set; its read-only set changing starts a new one.
  const key = JSON.stringify({ read: run.access.read, write: run.access.write });
  const full = JSON.stringify(run.access);
  let proc = running.get(key);
  if (proc && proc.key !== full) {
    proc.retired = true;
    running.delete(key);
    if (proc.jobs.size === 0) end(key, proc, "[magi: the body process was replaced]");
    proc = undefined;
  }
  proc ??= start(key, full, run.access);
  if (!proc) return Promise.resolve(undefined);
  const id = nextId++;
  return new Promise<BuiltinResult | undefined>((resolve) => {
    let pending = Promise.resolve();
    let done = false;
    const finish = (result: BuiltinResult | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      proc.jobs.delete(id);
      if (proc.retired && proc.jobs.size === 0) {
        end(key, proc, "[magi: the body process was replaced]");
      } else if (proc.jobs.size === 0 && !proc.ended) idle(key, proc);
      pending.then(() => resolve(result), () => resolve(result));
    };
    const stop = (note: string) => {
      finish({ said: "", isError: true, note });
      // Ended by magi (cancelled, out of time): no sign that body processes cannot start.
      end(key, proc, undefined, true);
    };
    const onAbort = () => stop("[magi: cancelled]");
    run.signal?.addEventListener("abort", onAbort);
    const timer = setTimeout(
      () => stop(`[magi: the body ran past ${run.timeoutMs / 1000} s and was stopped]`),
      Math.min(run.timeoutMs + 1000, 2 ** 31 - 1),
    );
    clearTimeout(proc.idleTimer);
    proc.idleSince = undefined;
    proc.jobs.set(id, {
      said: (chunk) => pending = pending.then(() => run.said(chunk)),
      finish,
    });
    proc.write(JSON.stringify({ id, job })).catch(() => end(key, proc));
  });
}

/** Ends every body process (tests, benchmarks; magi's exit ends them too). */
export function closeBodyProcesses(): void {
  for (const [key, proc] of [...running]) end(key, proc, "[magi: the body process was closed]");
}
