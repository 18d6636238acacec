/**
 * The one way magi starts a child process: in its own process group, stdin given or closed,
 * stdout streamed to a callback, a time limit that ends the whole group (TERM, then KILL),
 * and nothing left running afterwards (SPEC S5.1).
 *
 * @module
 */
import { launchedProgram } from "./fd_launch.ts";
import { newTag, sweepLater, sweepNow, TAG_VARIABLE } from "./sweep.ts";
import { findProgram, isExecutableFile } from "../core/program.ts";
import type { Restart } from "../core/types.ts";

/** What to run and how. */
export interface SpawnOptions {
  program: string;
  args: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  /** The child's whole environment (nothing else is inherited). */
  env: Record<string, string>;
  /** Bytes or text for stdin; absent means stdin is closed (reads see end of file). */
  stdin?: Uint8Array | string;
  /** Time limit in milliseconds; past it the process group is ended. */
  timeoutMs: number;
  /** Ends the process group when aborted. */
  signal?: AbortSignal;
  /**
   * Receives stdout as it arrives. The chunk is a view of a buffer that is reused once the
   * callback (and its promise) returns: copy it to keep it.
   */
  onStdout: (chunk: Uint8Array) => void | Promise<void>;
  /** Receives stderr as it arrives (same reuse rule); when absent only its tail is kept. */
  onStderr?: (chunk: Uint8Array) => void | Promise<void>;
  /** Stop reading stdout (and end the group) after this many bytes. */
  maxStdoutBytes?: number;
  /** Milliseconds between TERM and KILL (default 2000). */
  graceMs?: number;
  /** How a failed start is tried again (the sandbox's: see {@link Restart}). */
  restart?: Restart;
}

/** How the process ended. */
export interface SpawnOutcome {
  /** Exit status, or null when it was ended by a signal or never started. */
  code: number | null;
  /** The signal that ended it, such as "SIGSEGV". */
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when stdout was cut at `maxStdoutBytes`. */
  capped: boolean;
  /** Why the program could not be started, when it could not. */
  startError?: string;
  /** The last 4096 bytes of stderr (when `onStderr` is absent). */
  stderrTail: Uint8Array;
  /** Whether stderr was longer than `stderrTail`. */
  stderrCut: boolean;
}

const STDERR_TAIL_BYTES = 4096;
/** The longest delay a timer can have, in milliseconds. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Size of the buffer each pipe is read into, in bytes. */
const READ_BYTES = 65536;
/** How long output from left-behind children is still read after the main process ends. */
const DRAIN_MS = 200;

/** Process groups started and not yet ended; ended on SIGINT/SIGTERM of magi itself. */
const liveGroups = new Set<number>();
/** The tags (`sweep.ts`) of children still running; swept too when magi itself is ended. */
const liveTags = new Set<string>();
/** Groups that also end when magi exits normally (servers: {@link trackGroup}'s `atExit`). */
const exitGroups = new Set<number>();
let signalsHooked = false;
let unloadHooked = false;
let interruptClaims = 0;

/**
 * Lets a command handle SIGINT itself — `magi chat` cancels the running tool instead of
 * exiting — so magi's own last-resort handler (end every process group, exit 130) stands
 * aside while the claim holds. SIGTERM and SIGHUP still end everything.
 *
 * @returns the function that releases the claim
 */
export function claimInterrupts(): () => void {
  interruptClaims++;
  let released = false;
  return () => {
    if (!released) interruptClaims--;
    released = true;
  };
}

/** Files removed if magi is ended by a signal before their owner removes them. */
const doomed = new Set<string>();

/**
 * Marks a file for removal should magi be ended by SIGINT, SIGTERM or SIGHUP — for a call's
 * `$MAGI_SHOWN` file, which holds a tool's output before it is masked.
 *
 * @returns the function that unmarks it (call it once the file is removed)
 */
export function removeOnSignal(path: string): () => void {
  hookSignals();
  doomed.add(path);
  return () => void doomed.delete(path);
}

function hookSignals(): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    try {
      Deno.addSignalListener(sig, () => {
        if (sig === "SIGINT" && interruptClaims > 0) return;
        for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
        sweepNow(liveTags);
        for (const path of doomed) {
          try {
            Deno.removeSync(path);
          } catch {
            // Already gone.
          }
        }
        Deno.exit(sig === "SIGINT" ? 130 : 143);
      });
    } catch {
      // Signal listeners are not available everywhere; nothing to undo.
    }
  }
}

/**
 * Tracks a long-lived process group started elsewhere (an MCP server, a Worker's child): it
 * is killed, like every group spawnProcess starts, when magi gets SIGINT, SIGTERM or SIGHUP.
 * With its tag (`sweep.ts`), what left the group is swept once it is untracked. With
 * `atExit`, the group is also killed when magi exits normally (a server it started).
 *
 * @returns the function that stops tracking it (call it once the group has ended)
 */
export function trackGroup(
  pgid: number,
  tag?: string,
  opts: { atExit?: boolean } = {},
): () => void {
  hookSignals();
  liveGroups.add(pgid);
  if (tag) liveTags.add(tag);
  if (opts.atExit) {
    hookUnload();
    exitGroups.add(pgid);
  }
  return () => {
    liveGroups.delete(pgid);
    exitGroups.delete(pgid);
    if (tag && liveTags.delete(tag)) sweepLater(tag);
  };
}

function hookUnload(): void {
  if (unloadHooked) return;
  unloadHooked = true;
  globalThis.addEventListener("unload", () => {
    for (const pgid of exitGroups) killGroup(pgid, "SIGKILL");
  });
}

/**
 * Who tracks and signals the process groups {@link spawnProcess} starts, when this thread may
 * not: a Worker whose Deno permissions allow only certain programs cannot send signals
 * (`Deno.kill` needs the whole run permission), so it hands each group to the thread that
 * started it.
 */
export interface GroupKeeper {
  /** `tag`: the child's `MAGI_PROCESS_TAG`, to sweep once it ends (`sweep.ts`). */
  started(pgid: number, tag: string): void;
  signal(pgid: number, signal: Deno.Signal): void;
  ended(pgid: number): void;
}

let keeper: GroupKeeper | undefined;

/** Hands every process group this thread starts from now on to `k`. */
export function keepGroupsWith(k: GroupKeeper): void {
  keeper = k;
}

function signalGroup(pgid: number, signal: Deno.Signal): void {
  if (keeper) keeper.signal(pgid, signal);
  else killGroup(pgid, signal);
}

/** Sends a signal to a whole process group; a group that is gone is not an error. */
export function killGroup(pgid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/**
 * Reads `reader` into one reused buffer (a long stream then allocates nothing per chunk),
 * giving each chunk to `take` until the stream ends or `take` answers false. A cancelled
 * reader ends the reading quietly: output from an escaped child is no longer wanted.
 */
async function readEach(
  reader: ReadableStreamBYOBReader,
  take: (chunk: Uint8Array) => Promise<boolean>,
): Promise<void> {
  let buffer = new ArrayBuffer(READ_BYTES);
  try {
    while (true) {
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done || !value) break;
      buffer = value.buffer;
      if (!await take(value)) break;
    }
  } catch {
    // The reader was cancelled.
  }
}

function appendTail(tail: Uint8Array, chunk: Uint8Array): Uint8Array {
  const joined = new Uint8Array(tail.length + chunk.length);
  joined.set(tail);
  joined.set(chunk, tail.length);
  return joined.length > STDERR_TAIL_BYTES
    ? joined.slice(joined.length - STDERR_TAIL_BYTES)
    : joined;
}

/**
 * Runs a program to its end and reports how it ended. Never throws for the child's
 * behaviour: a program that cannot start is reported in `startError`.
 */
export async function spawnProcess(opts: SpawnOptions): Promise<SpawnOutcome> {
  let run = opts;
  while (true) {
    const { outcome, held, flush } = await spawnOnce(run);
    const restart = run.restart;
    if (!held || !restart) return outcome;
    const quiet = outcome.code === 1 && !outcome.timedOut && !outcome.cancelled;
    const verdict = quiet ? restart.again(held) : undefined;
    if (verdict && "fail" in verdict) return { ...outcome, code: null, startError: verdict.fail };
    if (!verdict || opts.signal?.aborted) {
      await flush();
      return outcome;
    }
    run = { ...run, program: verdict.program, args: verdict.args, restart: verdict.restart };
  }
}

/** One start: its outcome, and stderr still held back (with the way to deliver it) if any. */
async function spawnOnce(
  opts: SpawnOptions,
): Promise<{ outcome: SpawnOutcome; held?: string; flush: () => Promise<void> }> {
  hookSignals();
  const outcome: SpawnOutcome = {
    code: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    capped: false,
    stderrTail: new Uint8Array(0),
    stderrCut: false,
  };
  let child: Deno.ChildProcess;
  // Descendants inherit the tag: those that leave the process group are found by it.
  const tag = newTag();
  try {
    child = startInGroup({ ...opts, env: { ...opts.env, [TAG_VARIABLE]: tag } });
  } catch (error) {
    outcome.startError = describeStartError(opts.program, error);
    return { outcome, flush: () => Promise.resolve() };
  }
  const pgid = child.pid;
  liveGroups.add(pgid);
  liveTags.add(tag);
  keeper?.started(pgid, tag);
  const grace = opts.graceMs ?? 2000;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const end = (why: "timeout" | "cancel" | "cap") => {
    if (why === "timeout") outcome.timedOut = true;
    if (why === "cancel") outcome.cancelled = true;
    if (why === "cap") outcome.capped = true;
    signalGroup(pgid, "SIGTERM");
    killTimer ??= setTimeout(() => signalGroup(pgid, "SIGKILL"), grace);
  };
  // Timers hold at most 2^31 − 1 ms (about 24.8 days); a longer limit means no limit.
  const timer = opts.timeoutMs <= MAX_TIMER_MS
    ? setTimeout(() => end("timeout"), opts.timeoutMs)
    : undefined;
  const onAbort = () => end("cancel");
  if (opts.signal?.aborted) end("cancel");
  opts.signal?.addEventListener("abort", onAbort);

  if (opts.stdin !== undefined) feedStdin(child.stdin, opts.stdin);

  let stdoutBytes = 0;
  const stdoutReader = child.stdout.getReader({ mode: "byob" });
  const stderrReader = child.stderr.getReader({ mode: "byob" });
  const takeStderr = async (value: Uint8Array) => {
    if (opts.onStderr) await opts.onStderr(value);
    else {
      if (outcome.stderrTail.length + value.length > STDERR_TAIL_BYTES) {
        outcome.stderrCut = true;
      }
      outcome.stderrTail = appendTail(outcome.stderrTail, value);
    }
  };
  // Held back while it could be a failed start's message (`opts.restart`): nothing on stdout
  // yet and all of stderr so far agrees with the prefix.
  const prefix = opts.restart?.prefix;
  let held: Uint8Array[] | undefined = prefix !== undefined ? [] : undefined;
  let heldText = "";
  const release = async () => {
    const chunks = held ?? [];
    held = undefined;
    for (const chunk of chunks) await takeStderr(chunk);
  };
  const readStdout = readEach(stdoutReader, async (value) => {
    if (held) await release();
    let chunk: Uint8Array = value;
    if (opts.maxStdoutBytes !== undefined) {
      const room = opts.maxStdoutBytes - stdoutBytes;
      if (chunk.length > room) chunk = chunk.subarray(0, Math.max(0, room));
      stdoutBytes += chunk.length;
      if (chunk.length > 0) await opts.onStdout(chunk);
      if (stdoutBytes >= opts.maxStdoutBytes) {
        end("cap");
        return false;
      }
    } else {
      await opts.onStdout(chunk);
    }
    return true;
  });
  const readStderr = readEach(stderrReader, async (value) => {
    if (held && prefix !== undefined) {
      held.push(value.slice());
      heldText += new TextDecoder().decode(value);
      const agrees = heldText.length < prefix.length
        ? prefix.startsWith(heldText)
        : heldText.startsWith(prefix);
      if (agrees && heldText.length <= STDERR_TAIL_BYTES) return true;
      await release();
      return true;
    }
    await takeStderr(value);
    return true;
  });

  const status = await child.status;
  outcome.code = status.signal ? null : status.code;
  outcome.signal = status.signal ?? null;
  // bwrap passes on a command killed by a signal as exit status 128 + its number.
  const program = launchedProgram(opts.program, opts.args);
  const name = program.slice(program.lastIndexOf("/") + 1);
  const sig = name === "bwrap" && outcome.code !== null ? SIGNAL_NAMES[outcome.code - 128] : "";
  if (sig) {
    outcome.code = null;
    outcome.signal = sig as Deno.Signal;
  }
  // Children left behind may still hold stdout open: read what they already wrote, then
  // end the group and stop waiting for the pipes.
  const drained = await settleWithin(Promise.all([readStdout, readStderr]), DRAIN_MS);
  signalGroup(pgid, "SIGTERM");
  if (!drained) {
    const settled = await settleWithin(Promise.all([readStdout, readStderr]), DRAIN_MS);
    if (!settled) {
      signalGroup(pgid, "SIGKILL");
      await stdoutReader.cancel().catch(() => {});
      await stderrReader.cancel().catch(() => {});
    }
  }
  await Promise.all([readStdout, readStderr]);
  signalGroup(pgid, "SIGKILL");
  liveGroups.delete(pgid);
  liveTags.delete(tag);
  if (keeper) keeper.ended(pgid);
  else sweepLater(tag);
  clearTimeout(timer);
  clearTimeout(killTimer);
  opts.signal?.removeEventListener("abort", onAbort);
  if (held && held.length > 0) return { outcome, held: heldText, flush: release };
  await release();
  return { outcome, flush: () => Promise.resolve() };
}

/**
 * Starts the program as the leader of a new session and process group. Deno's `detached`
 * does that with a fork of magi's whole process (its `setsid` runs between fork and exec),
 * which costs more the more memory magi holds (1.3 ms at 40 MiB, 25 ms at 550 MiB, against
 * 0.8 ms for a plain start) and serialises parallel starts. Where util-linux `setsid` exists
 * and the program is plainly executable, `setsid PROGRAM ARGS…` is started instead, without
 * a fork of magi: it makes itself the group leader and execs the program in its place, so
 * the pid is still the group's id. Anything else — no `setsid` (macOS), a program that is
 * missing, not executable or not a binary or `#!` script, a Worker not allowed to run
 * `setsid` — takes the `detached` path, whose errors are Deno's own.
 */
function startInGroup(opts: SpawnOptions): Deno.ChildProcess {
  const common = {
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  } as const;
  const setsid = setsidProgram();
  if (setsid && directlyExecutable(opts.program, opts.env)) {
    try {
      return new Deno.Command(setsid, { ...common, args: [opts.program, ...opts.args] }).spawn();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotCapable)) throw error;
      setsidPath = null; // Not allowed here (a policy Worker): use detached from now on.
    }
  }
  return new Deno.Command(opts.program, { ...common, args: [...opts.args], detached: true })
    .spawn();
}

let setsidPath: string | null | undefined;

/** util-linux `setsid`, when this is Linux and it is installed. */
function setsidProgram(): string | null {
  if (setsidPath !== undefined) return setsidPath;
  setsidPath = null;
  if (Deno.build.os !== "linux") return null;
  for (const path of ["/usr/bin/setsid", "/bin/setsid"]) {
    if (isExecutableFile(path)) return setsidPath = path;
  }
  return null;
}

/**
 * Whether `program` (absolute, or a bare name found on the child's PATH) is an executable
 * regular file that starts as an ELF binary or a `#!` script: then `setsid` execs it exactly
 * as Deno would (no shell fallback, no error of its own to tell apart).
 */
function directlyExecutable(program: string, env: Record<string, string>): boolean {
  let path: string | undefined;
  if (program.startsWith("/")) path = isExecutableFile(program) ? program : undefined;
  else if (!program.includes("/") && env.PATH) {
    path = findProgram(program, env.PATH);
  }
  if (!path) return false;
  try {
    using file = Deno.openSync(path);
    const head = new Uint8Array(4);
    const n = file.readSync(head) ?? 0;
    const elf = n === 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c &&
      head[3] === 0x46;
    return elf || (n >= 2 && head[0] === 0x23 && head[1] === 0x21);
  } catch {
    return false;
  }
}

function feedStdin(stdin: WritableStream<Uint8Array>, data: Uint8Array | string): void {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const writer = stdin.getWriter();
  writer.write(bytes).then(() => writer.close()).catch(() => {
    // The program exited without reading all of stdin: not an error of the call.
  });
}

async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  const result = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return result;
}

function describeStartError(program: string, error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return `Cannot start "${program}": no such program`;
  if (error instanceof Deno.errors.PermissionDenied) {
    return `Cannot start "${program}": permission denied (is it executable?)`;
  }
  if (error instanceof Deno.errors.NotCapable) {
    return `Cannot start "${program}": not allowed by magi's permissions`;
  }
  return `Cannot start "${program}": ${error instanceof Error ? error.message : String(error)}`;
}

/** Signal names by number (Linux), for a status of 128 + N. */
const SIGNAL_NAMES: Record<number, string> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
};
