/**
 * Running a program as one tool call — shared by tools_dir tools and Lua declarations with
 * `transport = "command"`: stdout streams to said; a person-facing rendering written to the
 * file named by `$MAGI_SHOWN` becomes shown; a question written to the file named by
 * `$MAGI_ASK` turns the call into a question, and the answer comes back in `$MAGI_ANSWERED`
 * when the call resumes (SPEC S3.6; the convention is in `tools/README.md`).
 *
 * @module
 */
import { scratchDir } from "../confinement/sandbox.ts";
import { openSettled, readSettled } from "../exec/settled_file.ts";
import { processOutcome } from "../exec/outcome.ts";
import { removeOnSignal, spawnProcess } from "../exec/spawn.ts";
import type { ProgramInput } from "./argv.ts";
import type { Invocation, Outcome, Question } from "../core/types.ts";
import { parseJsonObject } from "../core/json_object.ts";

/** A question file larger than this (bytes) is not read. */
const ASK_MAX_BYTES = 64 * 1024;

/**
 * Runs `program` with the call's argv and stdin, in the call's folder, environment, time limit
 * and cancellation.
 *
 * @param program a path, or a name looked up on the call's PATH
 * @param opts `ownSockets`: the program may reach the call's own unix sockets (see `Invocation`)
 */
export async function runProgramCall(
  program: string,
  input: ProgramInput,
  call: Invocation,
  opts: { ownSockets?: boolean } = {},
): Promise<Outcome> {
  // In magi's scratch folder: writable inside the read-only sandbox too. Both at once: each
  // is a round trip to Deno's blocking pool.
  const dir = scratchDir();
  const [shownFile, askFile] = await Promise.all([
    Deno.makeTempFile({ dir, prefix: "magi-shown-" }),
    Deno.makeTempFile({ dir, prefix: "magi-ask-" }),
  ]);
  const forget = [removeOnSignal(shownFile), removeOnSignal(askFile)];
  try {
    // Inside the policy's sandbox when it is on.
    const command = call.sandbox?.(program, input.args, opts) ??
      { program, args: input.args };
    const spawned = await spawnProcess({
      program: command.program,
      args: command.args,
      restart: command.restart,
      cwd: call.cwd,
      env: { ...call.env, ...answerEnv(call.args), MAGI_SHOWN: shownFile, MAGI_ASK: askFile },
      stdin: input.stdin,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
      onStdout: (chunk) => call.emit.said(chunk),
    });
    const outcome = processOutcome(spawned, call.timeoutMs);
    if (!spawned.timedOut && !spawned.cancelled && !spawned.startError) {
      const question = await readQuestion(askFile);
      if (question) return { isError: false, ask: question };
    }
    await forwardShown(shownFile, call);
    return outcome;
  } finally {
    await Promise.all([
      Deno.remove(shownFile).catch(() => {}),
      Deno.remove(askFile).catch(() => {}),
    ]);
    for (const unmark of forget) unmark();
  }
}

/** `MAGI_ANSWERED`: the person's answer, when the call resumes after a question. */
function answerEnv(args: Record<string, unknown>): Record<string, string> {
  return typeof args.answered === "string" ? { MAGI_ANSWERED: args.answered } : {};
}

/**
 * Reads a question file: JSON `{"ask": "…", "choices": ["…"]}`, or plain text that is the
 * question itself. An empty or unreadable file is no question.
 */
export async function readQuestion(path: string): Promise<Question | undefined> {
  // Only the regular file magi made: the tool could have swapped it for a symlink to a file
  // its sandbox hides.
  const text = (await readSettled(path, ASK_MAX_BYTES))?.trim();
  if (!text) return undefined;
  return parseQuestion(text) ?? { question: text };
}

/**
 * Reads `{"ask": "…", "choices": [...]}` from JSON text.
 *
 * @returns the question, or undefined when the text is not such an object
 */
export function parseQuestion(text: string): Question | undefined {
  const record = parseJsonObject(text);
  if (typeof record?.ask !== "string" || record.ask === "") return undefined;
  const question: Question = { question: record.ask };
  if (Array.isArray(record.choices) && record.choices.length > 0) {
    question.choices = record.choices.map(String);
  }
  return question;
}

/** Streams the `$MAGI_SHOWN` file, when the tool wrote one, into shown. */
async function forwardShown(path: string, call: Invocation): Promise<void> {
  // Only the regular file magi made (see readQuestion).
  const file = await openSettled(path);
  if (!file) return;
  try {
    for await (const chunk of file.readable) await call.emit.shown(chunk);
  } catch {
    // A shown file that cannot be read only costs the person's rendering.
  }
}
