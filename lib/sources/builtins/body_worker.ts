/**
 * Deno's permissions behind the policy (SPEC S8.2): an in-process builtin's body runs in a
 * Worker whose Deno permissions are derived from the policy: read inside the roots, write
 * inside the roots only for a tool that writes, run only the programs the policy allows (their
 * real paths), no network, no FFI, no environment, no imports from the network. (Lua bodies
 * have a Worker of their own: `lib/exec/lua/worker_host.ts`.) A bug in the body, or in magi's own checks, then meets Deno's refusal
 * (`Deno.errors.NotCapable`), and the call ends as an error result saying what was refused.
 *
 * Needs `--unstable-worker-options` (deno.json `"unstable": ["worker-options"]`).
 *
 * @module
 */
import type { BuiltinContext, BuiltinResult } from "./builtin.ts";
import { allowedPrograms, type Policy } from "../../policy/decide.ts";
import { type BodyJob, thrownResult } from "./body_job.ts";
import {
  bodyProcessProblem,
  hiddenInside,
  runInBodyProcess,
  writeProtects,
} from "./body_process.ts";
import { overCap } from "./_files.ts";
import { sourceUrl } from "../../core/source_root.ts";
import { hiddenFor, runsLater } from "../../policy/facts.ts";

/** The Deno permissions of one body Worker. */
export interface BodyPermissions {
  read: string[];
  write: string[] | false;
  run: string[] | false;
}

/**
 * The permissions a body gets under the policy.
 *
 * @param opts.write whether the body may write inside the roots
 * @param opts.read more folders or files it must read (its own module, wasmoon's files)
 */
export function bodyPermissions(
  policy: Policy,
  opts: { write?: boolean; read?: string[] } = {},
): BodyPermissions {
  const programs = allowedPrograms(policy);
  return {
    read: [...policy.roots, ...(opts.read ?? [])],
    write: opts.write ? [...policy.roots] : false,
    run: programs.length > 0 ? programs : false,
  };
}

/** What running a body needs besides the job. */
export interface BodyRun {
  permissions: BodyPermissions;
  /** Milliseconds; the Worker is ended a second after it. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output as the body streams it. */
  said(chunk: Uint8Array | string): Promise<void>;
}

/** How long an idle body Worker is kept for the next job, in milliseconds. */
const IDLE_MS = 30_000;

interface Pooled {
  worker: Worker;
  key: string;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * Idle Workers by permission set. Starting a Worker costs tens of milliseconds (a fresh
 * isolate loading the builtins), more than most bodies take, so a Worker that finished a job
 * cleanly serves the next one with the same permissions; one that timed out, was cancelled
 * or crashed is ended instead.
 */
const idle = new Map<string, Pooled[]>();

function take(permissions: BodyPermissions): Pooled {
  const key = JSON.stringify(permissions);
  const ready = idle.get(key)?.pop();
  if (ready) {
    clearTimeout(ready.idleTimer);
    return ready;
  }
  const worker = new Worker(sourceUrl("lib/sources/builtins/worker_entry.ts"), {
    type: "module",
    deno: {
      permissions: {
        read: permissions.read,
        write: permissions.write,
        run: permissions.run,
        net: false,
        env: false,
        sys: false,
        ffi: false,
        import: false,
      },
    },
  } as WorkerOptions);
  return { worker, key };
}

function giveBack(pooled: Pooled): void {
  pooled.worker.onmessage = null;
  pooled.worker.onerror = null;
  const list = idle.get(pooled.key) ?? [];
  idle.set(pooled.key, list);
  list.push(pooled);
  pooled.idleTimer = setTimeout(() => {
    list.splice(list.indexOf(pooled), 1);
    pooled.worker.terminate();
  }, IDLE_MS);
  Deno.unrefTimer(pooled.idleTimer as unknown as number);
}

/** Ends every idle body Worker (an idle Worker keeps the process alive). */
export function closeBodyWorkers(): void {
  for (const list of idle.values()) {
    for (const pooled of list.splice(0)) {
      clearTimeout(pooled.idleTimer);
      pooled.worker.terminate();
    }
  }
}

/**
 * Runs one job in a Worker with the given permissions (a pooled one when one is idle). Never
 * throws for what the body does: Deno's refusals, a throw, a time-out and cancellation come
 * back as an error result.
 */
export function runBody(job: BodyJob, run: BodyRun): Promise<BuiltinResult> {
  const pooled = take(run.permissions);
  const worker = pooled.worker;
  return new Promise<BuiltinResult>((resolve) => {
    let pending = Promise.resolve();
    let done = false;
    const finish = (result: BuiltinResult, healthy: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      if (healthy) giveBack(pooled);
      else worker.terminate();
      pending.then(() => resolve(result), () => resolve(result));
    };
    const onAbort = () => finish({ said: "", isError: true, note: "[magi: cancelled]" }, false);
    run.signal?.addEventListener("abort", onAbort);
    const timer = setTimeout(() =>
      finish({
        said: "",
        isError: true,
        note: `[magi: the body ran past ${run.timeoutMs / 1000} s and was stopped]`,
      }, false), Math.min(run.timeoutMs + 1000, 2 ** 31 - 1)); // a timer holds at most 2^31 − 1 ms
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.type === "said") pending = pending.then(() => run.said(m.chunk));
      else if (m.type === "done") finish(m.result, true);
      else if (m.type === "error") finish(thrownResult(m.name, m.message), true);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      finish({
        said: "",
        isError: true,
        note: `[magi: the body's Worker failed: ${event.message}]`,
      }, false);
    };
    worker.postMessage(job);
  });
}

/** The builtins whose bodies run in a policy Worker, and whether each writes. */
export const CONFINED_BUILTINS: Record<string, { write: boolean }> = {
  read: { write: false },
  grep: { write: false },
  write: { write: true },
  edit: { write: true },
};

/**
 * The body of a builtin as it runs under the policy: in a Worker for the file builtins
 * ({@link CONFINED_BUILTINS}), undefined (in-process) for the others — `run` starts bash,
 * which Deno's permissions cannot confine (the sandbox can).
 *
 * @param policy called when the body runs (the policy is built after the builtins)
 * @param opts.writeBytes the cap on what `write` and `edit` put in a file (bytes,
 *   `limits.write_bytes`): content over it is an error result before it is copied to the
 *   Worker
 * @param opts.process false: always the Worker, never a body process (`body_process.ts`)
 */
export function confinedBody(
  policy: () => Policy,
  builtin: { name: string },
  opts: { writeBytes?: number; process?: boolean } = {},
): ((args: Record<string, unknown>, ctx: BuiltinContext) => Promise<BuiltinResult>) | undefined {
  const confined = CONFINED_BUILTINS[builtin.name];
  if (!confined) return undefined;
  const writeBytes = opts.writeBytes;
  return async (args, ctx) => {
    const big = tooBig(builtin.name, args, writeBytes);
    if (big) return big;
    const current = policy();
    const job: BodyJob = {
      kind: "builtin",
      export: builtin.name,
      args,
      ctx: {
        cwd: ctx.cwd,
        env: ctx.env,
        timeoutMs: ctx.timeoutMs,
        roots: [...ctx.roots],
        writeBytes,
        // What the sandbox hides and keeps read-only, refused here by the same lists.
        hidden: hiddenFor(current),
        // (What `write` and `edit` refuse: looked up for them alone.)
        protect: confined.write ? runsLater(current) : undefined,
      },
    };
    const permissions = bodyPermissions(current, { write: confined.write });
    const run = { timeoutMs: ctx.timeoutMs, signal: ctx.signal, said: ctx.said };
    // In a mount namespace of the roots where one can start; else in the Worker.
    if (opts.process !== false && await bodyProcessProblem() === undefined) {
      const write = permissions.write;
      const readOnly = write ? writeProtects(write, current.env, job.ctx.protect) : [];
      const hidden = hiddenInside(job.ctx.hidden!, [...permissions.read, ...write || []]);
      const access = { read: permissions.read, write, readOnly, ...hidden };
      const result = await runInBodyProcess(job, { ...run, access });
      if (result) return result;
    }
    return await runBody(job, { ...run, permissions });
  };
}

/** The write cap's error result for a `write` or `edit` call whose text is over it. */
function tooBig(
  name: string,
  args: Record<string, unknown>,
  writeBytes: number | undefined,
): BuiltinResult | undefined {
  const path = String(args.path);
  const fields = name === "write"
    ? ["content"]
    : name === "edit"
    ? ["new_string", "old_string"]
    : [];
  for (const field of fields) {
    const value = args[field];
    if (typeof value !== "string") continue;
    const result = overCap(name, path, value, { writeBytes });
    if (result) return result;
  }
  return undefined;
}
