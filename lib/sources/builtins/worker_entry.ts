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
import { type BodyJob, runBuiltin } from "./body_job.ts";

export type { BodyJob } from "./body_job.ts";

// deno-lint-ignore no-explicit-any
const scope = self as any;

scope.onmessage = async (event: MessageEvent<BodyJob>) => {
  const job = event.data;
  try {
    const result = await runBuiltin(job, (chunk) => {
      scope.postMessage({ type: "said", chunk });
      return Promise.resolve();
    });
    scope.postMessage({ type: "done", result });
  } catch (error) {
    const e = error as Error;
    scope.postMessage({ type: "error", name: e?.name ?? "Error", message: e?.message ?? e });
  }
};
