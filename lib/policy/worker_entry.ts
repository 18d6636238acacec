/**
 * The inside of a body Worker (see `body_worker.ts`): runs one builtin or one Lua body under
 * the Worker's Deno permissions and posts back what it said and how it ended. A permission
 * Deno refuses (`Deno.errors.NotCapable`) ends the call as an error naming what was refused.
 *
 * Messages in: {@link BodyJob}. Messages out: `{type: "said", chunk}` while it runs, then
 * `{type: "done", result}` or `{type: "error", name, message}`.
 *
 * @module
 */
import type { Builtin, BuiltinResult } from "../registry/builtins.ts";
import { LuaHost } from "../registry/lua/engine.ts";
import { BUILTINS } from "../../builtins/mod.ts";

/** One job for a body Worker. */
export type BodyJob =
  | {
    kind: "builtin";
    /** URL of a module exporting the builtin as `export`; absent: one of magi's builtins. */
    module?: string;
    /** The export's name, or the builtin's name. */
    export: string;
    args: Record<string, unknown>;
    ctx: { cwd: string; env: Record<string, string>; timeoutMs: number; roots: string[] };
  }
  | {
    kind: "lua";
    /** The declaration file's path (for messages) and text. */
    file: string;
    text: string;
    tool: string;
    args: Record<string, unknown>;
    ctx: { cwd: string; env: Record<string, string>; timeoutMs: number };
    memoryBytes: number;
  };

// deno-lint-ignore no-explicit-any
const scope = self as any;

scope.onmessage = async (event: MessageEvent<BodyJob>) => {
  const job = event.data;
  try {
    const result = job.kind === "builtin" ? await runBuiltin(job) : await runLua(job);
    scope.postMessage({ type: "done", result });
  } catch (error) {
    const e = error as Error;
    scope.postMessage({ type: "error", name: e?.name ?? "Error", message: e?.message ?? e });
  }
};

async function runBuiltin(job: Extract<BodyJob, { kind: "builtin" }>): Promise<BuiltinResult> {
  const builtin = job.module
    ? (await import(job.module))[job.export] as Builtin
    : BUILTINS.find((b) => b.name === job.export);
  if (!builtin) throw new TypeError(`No builtin "${job.export}"`);
  return await builtin.run(job.args, {
    ...job.ctx,
    signal: new AbortController().signal,
    said: (chunk) => {
      scope.postMessage({ type: "said", chunk });
      return Promise.resolve();
    },
  });
}

async function runLua(job: Extract<BodyJob, { kind: "lua" }>): Promise<BuiltinResult> {
  const host = await LuaHost.start({ memoryBytes: job.memoryBytes, print: () => {} });
  const loaded = host.loadFile(job.file, job.text, 5000);
  if (loaded.error) return { said: "", isError: true, note: `[magi: ${loaded.error}]` };
  const decl = loaded.decls.find((d) => d.name === job.tool && d.id !== undefined);
  if (!decl) return { said: "", isError: true, note: `[magi: no Lua tool "${job.tool}"]` };
  const reply = await host.run(decl.id!, job.args, job.ctx);
  if ("error" in reply) {
    return { said: "", isError: true, note: `[magi: the Lua body failed: ${reply.error}]` };
  }
  if ("timeout" in reply) {
    return { said: "", isError: true, note: "[magi: the Lua body timed out]" };
  }
  if ("ask" in reply) return { said: "", isError: true, note: "[magi: a question from a Worker]" };
  return { said: reply.said, shown: reply.shown, isError: reply.is_error === true };
}
