/**
 * The inside of a body Worker (see `body_worker.ts`): runs one builtin body under
 * the Worker's Deno permissions and posts back what it said and how it ended. A permission
 * Deno refuses (`Deno.errors.NotCapable`) ends the call as an error naming what was refused.
 *
 * Messages in: {@link BodyJob}. Messages out: `{type: "said", chunk}` while it runs, then
 * `{type: "done", result}` or `{type: "error", name, message}`.
 *
 * @module
 */
import type { Builtin, BuiltinResult } from "./builtin.ts";
import { BUILTINS } from "./mod.ts";

/** One job for a body Worker. */
export type BodyJob = {
  kind: "builtin";
  /** URL of a module exporting the builtin as `export`; absent: one of magi's builtins. */
  module?: string;
  /** The export's name, or the builtin's name. */
  export: string;
  args: Record<string, unknown>;
  ctx: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    roots: string[];
    writeBytes?: number;
  };
};

// deno-lint-ignore no-explicit-any
const scope = self as any;

scope.onmessage = async (event: MessageEvent<BodyJob>) => {
  const job = event.data;
  try {
    const result = await runBuiltin(job);
    scope.postMessage({ type: "done", result });
  } catch (error) {
    const e = error as Error;
    scope.postMessage({ type: "error", name: e?.name ?? "Error", message: e?.message ?? e });
  }
};

async function runBuiltin(job: BodyJob): Promise<BuiltinResult> {
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
