/**
 * The inside of a Lua Worker (see `worker_host.ts`): one Lua engine holding the declaration
 * files of one source, run under the Worker's Deno permissions (derived from the policy: no
 * files, no network, only the programs the policy allows). Each `magi.exec` is first put to
 * the main thread, which judges it by the policy.
 *
 * Messages in: {@link ToLuaWorker}. Messages out: {@link FromLuaWorker}.
 *
 * @module
 */
import { LuaHost, type RunReply } from "./engine.ts";
import type { LoadedFile } from "./engine.ts";
import type { ExecDecision, ExecJob } from "./host_api.ts";
import { keepGroupsWith } from "../spawn.ts";

/** What the main thread sends. */
export type ToLuaWorker =
  | { type: "init"; memoryBytes: number }
  | { type: "load"; id: number; path: string; text: string; timeoutMs: number }
  | {
    type: "run";
    id: number;
    declId: number;
    args: Record<string, unknown>;
    ctx: { cwd: string; env: Record<string, string>; timeoutMs: number };
  }
  | { type: "cancel"; id: number }
  | { type: "exec-decision"; execId: number; decision: ExecDecision };

/** What the Worker sends back. */
export type FromLuaWorker =
  | { type: "loaded"; id: number; loaded: LoadedFile }
  | { type: "ran"; id: number; reply: RunReply }
  | { type: "failed"; id: number; message: string }
  | { type: "print"; line: string }
  /** An exec of request `id` (a run, or a load) waits for the main thread's decision. */
  | { type: "exec"; id: number; execId: number; job: ExecJob }
  /** A process group this Worker started, to signal or that ended (the Worker cannot signal). */
  | { type: "group"; op: "started"; pgid: number; tag: string }
  | { type: "group"; op: "ended"; pgid: number }
  | { type: "group"; op: "signal"; pgid: number; signal: Deno.Signal };

// deno-lint-ignore no-explicit-any
const scope = self as any;
const post = (message: FromLuaWorker) => scope.postMessage(message);

keepGroupsWith({
  started: (pgid, tag) => post({ type: "group", op: "started", pgid, tag }),
  signal: (pgid, signal) => post({ type: "group", op: "signal", pgid, signal }),
  ended: (pgid) => post({ type: "group", op: "ended", pgid }),
});

let host: Promise<LuaHost> | undefined;
let memoryBytes = 64 << 20;
const cancels = new Map<number, AbortController>();
const waiting = new Map<number, (decision: ExecDecision) => void>();
let nextExec = 0;

function judgeFor(id: number): (job: ExecJob) => Promise<ExecDecision> {
  return (job) =>
    new Promise((resolve) => {
      const execId = ++nextExec;
      waiting.set(execId, resolve);
      post({ type: "exec", id, execId, job });
    });
}

function engine(): Promise<LuaHost> {
  return host ??= LuaHost.start({ memoryBytes, print: (line) => post({ type: "print", line }) });
}

scope.onmessage = async (event: MessageEvent<ToLuaWorker>) => {
  const m = event.data;
  if (m.type === "init") memoryBytes = m.memoryBytes;
  else if (m.type === "cancel") cancels.get(m.id)?.abort();
  else if (m.type === "exec-decision") {
    waiting.get(m.execId)?.(m.decision);
    waiting.delete(m.execId);
  } else if (m.type === "load") {
    try {
      const loaded = (await engine()).loadFile(m.path, m.text, m.timeoutMs, judgeFor(m.id));
      post({ type: "loaded", id: m.id, loaded });
    } catch (error) {
      post({ type: "failed", id: m.id, message: (error as Error).message });
    }
  } else if (m.type === "run") {
    const cancel = new AbortController();
    cancels.set(m.id, cancel);
    try {
      const reply = await (await engine()).run(m.declId, m.args, {
        ...m.ctx,
        signal: cancel.signal,
        judge: judgeFor(m.id),
      });
      post({ type: "ran", id: m.id, reply });
    } catch (error) {
      post({ type: "failed", id: m.id, message: (error as Error).message });
    } finally {
      cancels.delete(m.id);
    }
  }
};
