/**
 * The hooks of a session: `session_start` when `magi run` or `magi chat` starts or resumes
 * one, and `user_prompt` before the person's text enters it (exit status 2 holds the text
 * back, with the hook's reason).
 *
 * @module
 */
import type { Runtime } from "../runtime.ts";

/** Runs the `session_start` hooks (their output is not used). */
export async function sessionStartHook(rt: Runtime, source: "startup" | "resume"): Promise<void> {
  if (rt.hooks?.has("session_start")) await rt.hooks.run(rt, "session_start", { source });
}

/**
 * Runs the `user_prompt` hooks on the person's text.
 *
 * @returns the line to tell the person when a hook held the text back, else undefined
 */
export async function userPromptHook(rt: Runtime, prompt: string): Promise<string | undefined> {
  if (!rt.hooks?.has("user_prompt")) return undefined;
  const verdict = await rt.hooks.run(rt, "user_prompt", { prompt });
  if (verdict.blocked === undefined) return undefined;
  return `magi: a user_prompt hook held the text back: ${rt.masker.maskText(verdict.blocked)}`;
}
