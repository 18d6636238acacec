/**
 * Answering a tool's questions from the command line (SPEC S3.6): answers given with
 * `--answer TEXT` are used in order; without any, on a terminal the person is asked.
 *
 * @module
 */
import { stderr } from "../pipeline/out.ts";
import { choicesLine, normaliseAnswer } from "../terminal/choice.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import type { Question } from "../core/types.ts";

/**
 * The answer provider for `magi call`.
 *
 * @param given the `--answer` values, used in order; when they run out there is no answer
 * @param interactive whether a person can be asked on the terminal (used only when no
 *   `--answer` was given)
 * @returns undefined when there is no way to answer
 */
export function cliAnswers(
  given: readonly string[],
  interactive: boolean,
): AnswerProvider | undefined {
  if (given.length > 0) {
    const queue = [...given];
    return (question) => {
      const next = queue.shift();
      return Promise.resolve(
        next === undefined ? undefined : normaliseAnswer(next, question.choices),
      );
    };
  }
  return interactive ? askOnTerminal : undefined;
}

/**
 * Asks on stderr (masked, terminal-safe: the question is a tool's text) and reads one line
 * from stdin; a choice is answered by its word, its letter or its number
 * (`[y]es / [n]o / [a]lways`, lib/terminal/choice.ts).
 */
export async function askOnTerminal(question: Question): Promise<string | undefined> {
  const choices = question.choices?.length ? ` ${choicesLine(question.choices)}` : "";
  stderr.text(`? ${question.question}${choices}\n`);
  stderr.own("answer> ");
  const line = await readLine();
  if (line === undefined) return undefined;
  return normaliseAnswer(line, question.choices);
}

async function readLine(): Promise<string | undefined> {
  const bytes: number[] = [];
  const buf = new Uint8Array(1);
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) {
      return bytes.length ? new TextDecoder().decode(new Uint8Array(bytes)) : undefined;
    }
    if (buf[0] === 0x0a) return new TextDecoder().decode(new Uint8Array(bytes));
    bytes.push(buf[0]);
  }
}
