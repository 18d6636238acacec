/**
 * What a finished turn amounts to, so that no outcome ends as an empty success (SPEC
 * S7.5): an answer (text or tool calls), a refusal (Anthropic `stop_reason: "refusal"`,
 * OpenAI `finish_reason: "content_filter"` or a streamed `refusal`), a cut (`length`,
 * `max_tokens`), or reasoning with no answer. Each of the last three has one line for the
 * person and its own exit status of `magi run`.
 *
 * @module
 */
import type { TurnResult } from "./provider.ts";

/** What a turn amounts to, and the line that tells it. */
export type Outcome =
  | { kind: "answered" }
  | { kind: "refused" | "cut" | "no_answer"; line: string };

function quoted(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** Classifies a finished turn; `maxTokens` is named in the line of a cut answer. */
export function outcomeOf(result: TurnResult, maxTokens?: number): Outcome {
  const stop = result.stop;
  if (stop === "refusal" || stop === "content_filter" || result.refusal) {
    const said = result.refusal ?? result.text;
    return {
      kind: "refused",
      line: `the model refused to answer (stop reason "${stop}")${
        said.trim() ? `: ${quoted(said)}` : ""
      }`,
    };
  }
  if (stop === "length" || stop === "max_tokens") {
    const limit = maxTokens ? ` of ${maxTokens} tokens` : "";
    const calls = result.tool_calls.length > 0
      ? `; its ${result.tool_calls.length} tool call(s) were not run`
      : "";
    return {
      kind: "cut",
      line: `the answer was cut at the max_tokens limit${limit} (stop reason "${stop}")${calls}; ` +
        "raise providers.NAME.max_tokens to allow longer answers",
    };
  }
  if (result.text.trim() === "" && result.tool_calls.length === 0 && result.reasoning) {
    return {
      kind: "no_answer",
      line: `the model reasoned (${result.reasoning.length} characters) but gave no answer`,
    };
  }
  return { kind: "answered" };
}
