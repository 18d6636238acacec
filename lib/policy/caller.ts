/**
 * Who makes a call that reaches magi from a program magi started (SPEC S8.1): `magi builtin`
 * run by a tool link, a tool's script or a model's `run` line. The caller travels in the
 * child's environment: `runTool` sets `MAGI_CALLER` to its call's caller, so a model's tool
 * that runs `magi builtin write …` makes a model's call, judged and asked about as the model's
 * own `write` would be.
 *
 * This is not a boundary. A program can set its own environment (`MAGI_CALLER=person`), but
 * then it gets only what it could do by itself: inside the sandbox, whatever magi it runs is
 * held by the same mounts; with the sandbox off, the program already runs unsandboxed.
 *
 * @module
 */
import type { Caller } from "./door.ts";

/** The variable that names the caller of the call a child runs for. */
export const CALLER_VARIABLE = "MAGI_CALLER";

/**
 * The caller of `magi builtin`: the one `MAGI_CALLER` names ("person", "model", "mcp"); in a
 * tool's environment (`MAGI_CWD` set) that names none or another word, a model; with no
 * context of magi's at all, the person (their own shell).
 *
 * @param env this process's environment
 */
export function callerOf(env: Record<string, string | undefined>): Caller {
  const named = env[CALLER_VARIABLE];
  if (named === "person" || named === "model" || named === "mcp") return named;
  if (named === undefined && env.MAGI_CWD === undefined) return "person";
  return "model";
}
