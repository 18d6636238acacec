/**
 * Lua bodies under Deno's permissions (SPEC S8.2): the engine of one Lua source lives in a
 * Worker whose permissions come from the policy — no file access, no network, no
 * environment, and only the programs the policy allows by rule (their real paths). Each
 * `magi.exec` a body makes is judged here, on the main thread, as a `run` of that command
 * would be; Deno then refuses any program the Worker was not given, whatever a bug in the
 * judging said.
 *
 * The Worker stays up while calls come (files loaded once), and is ended after
 * {@link IDLE_MS} without one, when it stops answering, or when it fails; the next call
 * starts a fresh one.
 *
 * @module
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { killGroup, trackGroup } from "../spawn.ts";
import { sourceUrl } from "../../core/source_root.ts";
import type { Invocation, Outcome, Tool } from "../../core/types.ts";
import type { LoadedFile, RunReply } from "./engine.ts";
import { type ExecDecision, type ExecJob, execLimits, execValues } from "./host_api.ts";
import type { FromLuaWorker, ToLuaWorker } from "./worker_entry.ts";

/** What confines the Lua bodies of a runtime: the programs a Worker may start, the exec judge. */
export interface LuaConfinement {
  /** Real paths of the programs a Worker may start (its Deno `run` permission); called when one starts. */
  programs(): string[];
  /**
   * Decides one `magi.exec`: refused, or allowed as the program at this path (real, or as PATH finds it) — by a rule
   * (the Worker starts it, under its Deno permission) or by a person who was asked (a program
   * beyond the Worker's permission is then started by magi's main thread).
   *
   * @param call the tool call whose body execs; undefined while a file's top-level code runs
   * @param tool the declaration whose body execs, when known
   */
  judge(job: ExecJob, call: Invocation | undefined, tool?: string): Promise<ExecVerdict>;
  /** The confinement for a project's own `.magi/tools`, which came with a repository. */
  forProject?(): LuaConfinement;
  /** This is a project's confinement: its `transport = "command"` programs are judged too. */
  project?: boolean;
  /**
   * For a project's confinement: decides the builtin or peer tool a declaration reaches, as
   * a model's call of it; undefined when it may run, else the outcome that ends the call.
   */
  gateTool?(tool: Tool, call: Invocation): Promise<Outcome | undefined>;
}

/** What the judge made of one exec. */
export type ExecVerdict =
  | { refused: string }
  /** `wrap`: the sandbox the door chose for it (absent: unsandboxed, `--sandbox off`). */
  | { program: string; byPerson: boolean; wrap?: Invocation["sandbox"] };

/** How long a Worker with nothing to do is kept, in milliseconds. */
export const IDLE_MS = 30_000;
/** How long past a request's own time limit the Worker may stay silent, in milliseconds. */
const GRACE_MS = 5_000;

interface Pending {
  call?: Invocation;
  /** When the request's own time is up, in milliseconds since the epoch. */
  deadline: number;
  timer: ReturnType<typeof setTimeout>;
  settle(message: FromLuaWorker | { type: "failed"; message: string }): void;
}

/** One Lua Worker. */
export class LuaWorkerHost {
  readonly #worker: Worker;
  readonly #confine: LuaConfinement;
  readonly #print: (line: string) => void;
  readonly #onEnd: () => void;
  readonly #pending = new Map<number, Pending>();
  /** The declaration each running body belongs to, by request. */
  readonly #toolOf = new Map<number, string>();
  readonly #programs: string[];
  /** The process groups the Worker started and that have not ended: pgid → untrack. */
  readonly #groups = new Map<number, () => void>();
  readonly #memoryBytes: number;
  #next = 0;
  #idle?: ReturnType<typeof setTimeout>;
  #ended = false;
  /** Aborted when the Worker is ended: the programs started here for it end too. */
  readonly #stopped = new AbortController();

  /**
   * Starts the Worker.
   *
   * @param opts.memoryBytes the Lua heap's cap in bytes
   * @param opts.onEnd called once when the Worker is ended (its loaded files are gone)
   */
  constructor(opts: {
    memoryBytes: number;
    confine: LuaConfinement;
    print: (line: string) => void;
    onEnd: () => void;
  }) {
    this.#confine = opts.confine;
    this.#print = opts.print;
    this.#onEnd = opts.onEnd;
    const programs = this.#programs = opts.confine.programs();
    this.#memoryBytes = opts.memoryBytes;
    this.#worker = new Worker(sourceUrl("lib/exec/lua/worker_entry.ts"), {
      type: "module",
      deno: {
        permissions: {
          // wasmoon's own files (its code and glue.wasm), nothing else.
          read: [dirname(dirname(fileURLToPath(import.meta.resolve("wasmoon"))))],
          write: false,
          run: programs.length > 0 ? programs : false,
          net: false,
          env: false,
          sys: false,
          ffi: false,
          import: false,
        },
      },
    } as WorkerOptions);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.end(`the Lua Worker failed: ${event.message}`);
    };
    this.#send({ type: "init", memoryBytes: opts.memoryBytes });
    this.#startIdle();
  }

  /** Runs a declaration file's top-level code in the Worker; never rejects. */
  async loadFile(path: string, text: string, timeoutMs: number): Promise<LoadedFile> {
    const m = await this.#request(
      (id) => ({ type: "load", id, path, text, timeoutMs }),
      timeoutMs,
    );
    if (m.type === "loaded") return m.loaded;
    return { error: m.type === "failed" ? m.message : "unexpected reply", decls: [] };
  }

  /**
   * Runs one body; never rejects (failures come back as `{error}`).
   *
   * @param tool the declaration's name, for the person asked about one of its execs
   */
  async run(
    declId: number,
    args: Record<string, unknown>,
    call: Invocation,
    tool?: string,
  ): Promise<RunReply> {
    const ctx = { cwd: call.cwd, env: call.env, timeoutMs: call.timeoutMs };
    let id = 0;
    const onAbort = () => this.#send({ type: "cancel", id });
    call.signal.addEventListener("abort", onAbort);
    try {
      const m = await this.#request(
        (n) => {
          id = n;
          if (tool !== undefined) this.#toolOf.set(n, tool);
          // Aborted before the run was sent (while the engine started): cancel it right after.
          if (call.signal.aborted) queueMicrotask(onAbort);
          return { type: "run", id: n, declId, args, ctx };
        },
        call.timeoutMs,
        call,
      );
      if (m.type === "ran") return m.reply;
      return { error: m.type === "failed" ? m.message : "unexpected reply" };
    } finally {
      call.signal.removeEventListener("abort", onAbort);
      this.#toolOf.delete(id);
    }
  }

  /**
   * Ends the Worker; requests in flight end with `reason`.
   *
   * @param stuck the request that did not answer, and what the others in flight are told
   */
  end(reason = "the Lua Worker was ended", stuck?: { id: number; others: string }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopped.abort();
    clearTimeout(this.#idle);
    this.#worker.terminate();
    for (const [pgid, untrack] of this.#groups) {
      killGroup(pgid, "SIGKILL");
      untrack();
    }
    this.#groups.clear();
    for (const [id, p] of [...this.#pending]) {
      p.settle({ type: "failed", message: !stuck || id === stuck.id ? reason : stuck.others });
    }
    this.#onEnd();
  }

  #request(
    make: (id: number) => ToLuaWorker,
    timeoutMs: number,
    call?: Invocation,
  ): Promise<FromLuaWorker | { type: "failed"; message: string }> {
    if (this.#ended) return Promise.resolve({ type: "failed", message: "the Lua Worker ended" });
    clearTimeout(this.#idle);
    this.#worker.onmessage = (event) => this.#receive(event.data);
    const id = ++this.#next;
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          this.end(
            `${call ? "the body" : "the file's code"} did not stop at its time limit (${
              timeoutMs / 1000
            } s); its Lua Worker was ended`,
            {
              id,
              others: "its Lua Worker was ended: another call in it did not stop at its time limit",
            },
          ),
        Math.min(timeoutMs + GRACE_MS, 2 ** 31 - 1),
      );
      this.#pending.set(id, {
        call,
        deadline,
        timer,
        settle: (message) => {
          clearTimeout(timer);
          this.#pending.delete(id);
          if (this.#pending.size === 0 && !this.#ended) this.#startIdle();
          resolve(message);
        },
      });
      this.#send(make(id));
    });
  }

  #receive(m: FromLuaWorker): void {
    if (m.type === "print") this.#print(m.line);
    else if (m.type === "exec") void this.#judge(m.id, m.execId, m.job);
    else if (m.type === "group") this.#group(m);
    else this.#pending.get(m.id)?.settle(m);
  }

  /** Keeps the Worker's process groups: tracked for magi's own signals, signalled for it. */
  #group(m: Extract<FromLuaWorker, { type: "group" }>): void {
    if (m.op === "started") this.#groups.set(m.pgid, trackGroup(m.pgid, m.tag));
    else if (m.op === "ended") {
      this.#groups.get(m.pgid)?.();
      this.#groups.delete(m.pgid);
    } else if (m.op === "signal" && this.#groups.has(m.pgid)) killGroup(m.pgid, m.signal);
  }

  async #judge(id: number, execId: number, job: ExecJob): Promise<void> {
    let decision: ExecDecision;
    const pending = this.#pending.get(id);
    const call = pending?.call;
    try {
      const verdict = await beforeCallEnds(
        this.#confine.judge(job, call, this.#toolOf.get(id)),
        call,
        pending?.deadline,
      );
      if ("refused" in verdict) decision = verdict;
      else if (
        !call ||
        (!verdict.wrap && (!verdict.byPerson || this.#programs.includes(verdict.program)))
      ) {
        decision = { program: verdict.program };
      } else {
        // Started here: a program a person approved beyond the Worker's permission, or any
        // program the door sandboxed (bwrap wraps it; the Worker may not start bwrap).
        const limits = execLimits(this.#memoryBytes);
        // The person may have taken a while: the program gets what is left of the call's time.
        const left = Math.max(1, (pending?.deadline ?? Infinity) - Date.now());
        const wrapped = verdict.wrap
          ? verdict.wrap(verdict.program, job.args)
          : { program: verdict.program, args: job.args };
        const approved = { ...job, ...wrapped, timeoutMs: Math.min(job.timeoutMs, left) };
        decision = {
          done: await execValues(
            approved,
            call.env,
            limits,
            AbortSignal.any([call.signal, this.#stopped.signal]),
            { name: job.program },
          ),
        };
      }
    } catch (error) {
      decision = { refused: `the policy could not judge it: ${(error as Error).message}` };
    }
    this.#send({ type: "exec-decision", execId, decision });
  }

  /** Whether the Worker was ended. */
  get ended(): boolean {
    return this.#ended;
  }

  #send(message: ToLuaWorker): void {
    if (!this.#ended) this.#worker.postMessage(message);
  }

  /** With nothing in flight, the Worker stops listening and is ended after {@link IDLE_MS}. */
  #startIdle(): void {
    this.#worker.onmessage = null;
    this.#idle = setTimeout(() => this.end(), IDLE_MS);
    Deno.unrefTimer(this.#idle as unknown as number);
  }
}

/**
 * The judge's verdict, or a refusal once the call is cancelled or its time is up first — a
 * person being asked may answer late, and a program must not start after its call ended.
 */
function beforeCallEnds(
  verdict: Promise<ExecVerdict>,
  call: Invocation | undefined,
  deadline: number | undefined,
): Promise<ExecVerdict> {
  if (!call || deadline === undefined) return verdict;
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      call.signal.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      finish();
      resolve({ refused: "the call was cancelled while the policy decided" });
    };
    const timer = setTimeout(() => {
      finish();
      resolve({ refused: "the call's time limit was reached while the policy decided" });
    }, Math.min(Math.max(0, deadline - Date.now()), 2 ** 31 - 1));
    call.signal.addEventListener("abort", onAbort, { once: true });
    if (call.signal.aborted) onAbort();
    verdict.then((v) => {
      finish();
      resolve(v);
    }, (error) => {
      finish();
      reject(error);
    });
  });
}

/** Declaration files load with no program allowed: their top-level code only declares. */
export const LOADING: LuaConfinement = {
  programs: () => [],
  judge: () =>
    Promise.resolve({ refused: "magi.exec cannot start programs while declaration files load" }),
};
