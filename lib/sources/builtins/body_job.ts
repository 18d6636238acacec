/**
 * One job of a file builtin's body, as a body Worker (`worker_entry.ts`) or a body process
 * (`body_server.ts`) runs it: which builtin, its arguments, and the call's context.
 *
 * @module
 */
import type { Builtin, BuiltinResult } from "./builtin.ts";
import { BUILTINS } from "./mod.ts";
import type { HiddenSet } from "../../confinement/sandbox_paths.ts";

/** One job for a body Worker or a body process. */
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
    hidden?: HiddenSet;
    protect?: string[];
  };
};

/**
 * Runs one job's builtin (magi's own, or `job.module`'s export), its output going to `said`.
 *
 * @throws TypeError when there is no such builtin; whatever the body throws
 */
export async function runBuiltin(
  job: BodyJob,
  said: (chunk: Uint8Array | string) => Promise<void>,
): Promise<BuiltinResult> {
  const builtin = job.module
    ? (await import(job.module))[job.export] as Builtin
    : BUILTINS.find((b) => b.name === job.export);
  if (!builtin) throw new TypeError(`No builtin "${job.export}"`);
  return await builtin.run(job.args, { ...job.ctx, signal: new AbortController().signal, said });
}

/**
 * The error result of a body that threw: Deno's refusal (`NotCapable`) named as the policy's,
 * without Deno's advice to run again with a flag (that is for a person at a shell, not for the
 * model reading the result: the policy decides, not a flag).
 */
export function thrownResult(name: string, message: string): BuiltinResult {
  const refused = name === "NotCapable" ? "Deno refused it (the policy's permissions): " : "";
  const text = String(message).replace(/, run again with the --allow-[a-z]+ flag$/, "");
  return { said: "", isError: true, note: `[magi: ${refused}${name}: ${text}]` };
}
