/**
 * Tools that ask a question (SPEC S3.6): when a transport's outcome carries `ask`, the person
 * is asked (through the caller's answer provider) and the tool is invoked again with the
 * answer merged into its arguments as `answered`, re-validated first. Any transport reaches
 * this: a Lua body returning `{ask=…}`, a program writing `$MAGI_ASK`, a peer printing
 * `{"ask": …}`.
 *
 * @module
 */
import type { Invocation, Outcome, Question, Tool } from "../core/types.ts";

/** Gives the person's answer to a question, or undefined when there is no way to ask. */
export type AnswerProvider = (question: Question) => Promise<string | undefined>;

/** How many questions one call may ask before it ends as an error. */
export const MAX_QUESTIONS = 8;

/** The argument the answer travels in. */
export const ANSWER_FIELD = "answered";

/** What the question loop needs besides the tool and the first invocation. */
export interface AskOptions {
  answer?: AnswerProvider;
  /**
   * Why no answer can be had, and what would give one, for the caller's interface, such as
   * "no terminal to ask on; `magi call --answer TEXT` supplies one" (default: "no one to ask").
   */
  unanswered?: string;
  /** Checks the resumed call's arguments; returns what is wrong in one line, or null. */
  check: (args: Record<string, unknown>) => string | null;
  /** Masks text before the person sees it (questions come from tools). */
  mask: (text: string) => string;
}

function describe(question: Question): string {
  const choices = question.choices?.length
    ? ` (choices: ${question.choices.map((c) => JSON.stringify(c)).join(", ")})`
    : "";
  return `${JSON.stringify(question.question)}${choices}`;
}

/**
 * Invokes a tool, answering its questions until it gives a result. An `answered` field in the
 * first arguments is dropped unless the tool's schema declares it: only the person answers.
 * Never throws for the tool's behaviour beyond what `tool.invoke` throws.
 */
export async function invokeAsking(
  tool: Tool,
  first: Invocation,
  opts: AskOptions,
): Promise<Outcome> {
  let args = first.args;
  const declared = (tool.declaration.parameters.properties ?? {}) as Record<string, unknown>;
  if (ANSWER_FIELD in args && !(ANSWER_FIELD in declared)) {
    args = { ...args };
    delete args[ANSWER_FIELD];
  }
  for (let asked = 0;; asked++) {
    const outcome = await tool.invoke({ ...first, args });
    if (!outcome.ask) return outcome;
    const question: Question = {
      question: opts.mask(outcome.ask.question),
      ...(outcome.ask.choices?.length ? { choices: outcome.ask.choices.map(opts.mask) } : {}),
    };
    if (asked >= MAX_QUESTIONS) {
      return {
        isError: true,
        code: "unanswered",
        note: `[magi: the tool asked more than ${MAX_QUESTIONS} questions; the last was ${
          describe(question)
        }]`,
      };
    }
    if (first.signal.aborted) {
      return { isError: true, code: "cancelled", note: "[magi: cancelled]" };
    }
    const answer = opts.answer ? await opts.answer(question) : undefined;
    if (answer === undefined) {
      return {
        isError: true,
        code: "unanswered",
        note: `[magi: the tool asked ${describe(question)} and no answer was given (${
          opts.unanswered ?? "no one to ask"
        })]`,
      };
    }
    if (question.choices && !question.choices.includes(answer)) {
      return {
        isError: true,
        code: "unanswered",
        note: `[magi: the answer ${JSON.stringify(answer)} to ${
          describe(question)
        } is not one of the choices]`,
      };
    }
    args = { ...args, [ANSWER_FIELD]: answer };
    // An undeclared `answered` is magi's own field: the rest is checked as before.
    const checked = { ...args };
    if (!(ANSWER_FIELD in declared)) delete checked[ANSWER_FIELD];
    const problem = opts.check(checked);
    if (problem) {
      return {
        isError: true,
        code: "bad_arguments",
        note:
          `[magi: invalid arguments for "${tool.declaration.name}" with the answer: ${problem}]`,
      };
    }
  }
}
