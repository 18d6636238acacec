/**
 * The host side of the Lua API (SPEC S3.3): what `magi.exec`, `magi.cwd`, `magi.env`, `print`
 * and the time-limit hook call into. Every process `magi.exec` starts goes through
 * {@link spawnProcess} with the call's own environment (tool links first on PATH, the MAGI_*
 * context), working directory, remaining time and cancellation.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { spawnProcess } from "../spawn.ts";
import type { Restart } from "../../core/types.ts";

/** What a running Lua call may reach: one entry per call (and per file being loaded). */
export interface HostCall {
  /** Absolute working directory. */
  cwd: string;
  /** Environment for child processes. */
  env: Record<string, string>;
  /** When the call's time runs out, in milliseconds since the epoch. */
  deadline: number;
  signal?: AbortSignal;
  /**
   * Decides each `magi.exec` of the call before it starts (the policy, SPEC S8.1); absent:
   * every exec starts (an engine that only loads declarations, in tests and build scripts).
   */
  judge?: (job: ExecJob) => Promise<ExecDecision>;
}

/** One `magi.exec` as it is about to start: checked, its folder absolute. */
export interface ExecJob {
  program: string;
  args: string[];
  /** Absolute working directory. */
  cwd: string;
  stdin?: string;
  /** Milliseconds. */
  timeoutMs: number;
  /** How a failed start is tried again (the sandbox's, see `Restart`). */
  restart?: Restart;
}

/**
 * What the policy made of an exec: refused (the message the Lua error carries), allowed as
 * this program (its real path, started here), or already run elsewhere (its values).
 */
export type ExecDecision = { refused: string } | { program: string } | { done: ExecValues };

/**
 * What `magi.exec` gives Lua: `true, stdout, status, stderr` (status absent when a signal
 * ended the program), or `false, message` when it could not start, ran past its time, printed
 * too much or was refused.
 */
export type ExecValues = [true, string, number | undefined, string] | [false, string];

/** The calls in flight, by the id the Lua side knows them by. */
export class HostCalls {
  #next = 0;
  readonly #calls = new Map<number, HostCall>();

  /** Registers a call and returns its id. */
  open(call: HostCall): number {
    const id = ++this.#next;
    this.#calls.set(id, call);
    return id;
  }

  /** Forgets a call: from now on it counts as expired. */
  close(id: number): void {
    this.#calls.delete(id);
  }

  get(id: number): HostCall | undefined {
    return this.#calls.get(id);
  }

  /** Whether the call's time is up or it was cancelled (or it is unknown). */
  expired(id: number): boolean {
    const call = this.#calls.get(id);
    return !call || Date.now() > call.deadline || call.signal?.aborted === true;
  }
}

/** Limits of `magi.exec`. */
export interface ExecLimits {
  /** stdout larger than this (bytes) ends the program and raises a Lua error. */
  maxStdoutBytes: number;
  /** stderr beyond this many bytes is dropped (its head is kept). */
  maxStderrBytes: number;
}

/** The exec limits of an engine whose Lua heap is capped at `memoryBytes`. */
export function execLimits(memoryBytes: number): ExecLimits {
  return {
    maxStdoutBytes: Math.max(1024 * 1024, Math.floor(memoryBytes / 4)),
    maxStderrBytes: 256 * 1024,
  };
}

interface ExecRequest {
  program: string;
  args: string[];
  cwd?: string;
  stdin?: string;
  /** Seconds. */
  timeout?: number;
}

/** Packs several values for Lua (wasmoon's `LuaMultiReturn.of`). */
export type Pack = (...values: unknown[]) => unknown;

/**
 * Runs one `magi.exec` request for a call. Resolves (never rejects) to the values the Lua side
 * unpacks ({@link ExecValues}), packed.
 */
export async function execFor(
  calls: HostCalls,
  id: number,
  requestJson: string,
  limits: ExecLimits,
  pack: Pack,
): Promise<unknown> {
  const fail = (message: string) => pack(false, message);
  const call = calls.get(id);
  if (!call) return fail("the call has ended");
  let req: ExecRequest;
  try {
    req = JSON.parse(requestJson);
  } catch (error) {
    return fail(`bad request: ${(error as Error).message}`);
  }
  const remaining = call.deadline - Date.now();
  if (remaining <= 0) return fail("the call's time limit is reached");
  let timeoutMs = remaining;
  if (req.timeout !== undefined) {
    if (typeof req.timeout !== "number" || !(req.timeout > 0)) {
      return fail("opts.timeout must be a number of seconds greater than 0");
    }
    timeoutMs = Math.min(req.timeout * 1000, remaining);
  }
  if (req.stdin !== undefined && typeof req.stdin !== "string") {
    return fail("opts.stdin must be a string");
  }
  if (req.cwd !== undefined && typeof req.cwd !== "string") {
    return fail("opts.cwd must be a string");
  }
  const cwd = req.cwd === undefined
    ? call.cwd
    : isAbsolute(req.cwd)
    ? req.cwd
    : resolve(call.cwd, req.cwd);
  const job: ExecJob = { program: req.program, args: req.args, cwd, stdin: req.stdin, timeoutMs };
  if (call.judge) {
    const decision = await call.judge(job);
    if ("refused" in decision) return fail(decision.refused);
    if ("done" in decision) return pack(...decision.done);
    // A person may have been asked: the program gets what is left of the call's time.
    const left = call.deadline - Date.now();
    if (left <= 0) return fail("the call's time limit is reached");
    const judged = { ...job, program: decision.program, timeoutMs: Math.min(job.timeoutMs, left) };
    return pack(...await execValues(judged, call.env, limits, call.signal, { name: req.program }));
  }
  return pack(...await execValues(job, call.env, limits, call.signal));
}

/**
 * Starts one exec job and waits for it. Never rejects: a program that cannot start (Deno's
 * refusal included), runs past its time, prints more than `limits.maxStdoutBytes` or is
 * cancelled gives `[false, message]`.
 *
 * @param env the child's whole environment
 * @param opts.name the program as the body named it, for messages (default: `job.program`)
 */
export async function execValues(
  job: ExecJob,
  env: Record<string, string>,
  limits: ExecLimits,
  signal?: AbortSignal,
  opts: { name?: string } = {},
): Promise<ExecValues> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  let errBytes = 0;
  const spawned = await spawnProcess({
    program: job.program,
    args: job.args,
    restart: job.restart,
    cwd: job.cwd,
    env,
    stdin: job.stdin,
    timeoutMs: job.timeoutMs,
    signal,
    maxStdoutBytes: limits.maxStdoutBytes + 1,
    onStdout: (chunk) => void out.push(chunk.slice()),
    onStderr: (chunk) => {
      const room = limits.maxStderrBytes - errBytes;
      if (room <= 0) return;
      const kept = chunk.subarray(0, room).slice();
      errBytes += kept.length;
      err.push(kept);
    },
  });
  const name = JSON.stringify(opts.name ?? job.program);
  if (spawned.startError) {
    return [false, spawned.startError.replace(JSON.stringify(job.program), name)];
  }
  if (spawned.capped) {
    return [false, `${name} printed more than ${limits.maxStdoutBytes} bytes; it was stopped`];
  }
  if (spawned.timedOut) {
    // What was left of the call's time is rarely round: 999 ms reads as "1 s".
    const seconds = Number((job.timeoutMs / 1000).toPrecision(2));
    return [false, `${name} did not finish within ${seconds} s; it was stopped`];
  }
  if (spawned.cancelled) return [false, `${name} was cancelled`];
  return [true, decode(out), spawned.code ?? undefined, decode(err)];
}

function decode(chunks: Uint8Array[]): string {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * The functions the prelude reads from `__magi_host`.
 *
 * @param print receives each `print(…)` line (magi sends it to stderr, never to stdout)
 * @param pack packs several return values for Lua
 */
export function hostFunctions(
  calls: HostCalls,
  limits: ExecLimits,
  print: (line: string) => void,
  pack: Pack,
): Record<string, unknown> {
  return {
    expired: (id: number) => calls.expired(id),
    exec: (id: number, request: string) => execFor(calls, id, request, limits, pack),
    cwd: (id: number) => calls.get(id)?.cwd,
    env: (id: number, name?: string) => {
      const env = calls.get(id)?.env ?? {};
      return name === undefined ? JSON.stringify(env) : env[name];
    },
    print: (line: string) => print(String(line)),
  };
}
