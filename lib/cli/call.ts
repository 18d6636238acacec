/**
 * `magi call NAME [JSON|-] [--json] [--answer TEXT]…`: one tool call through the pipeline,
 * made by a person. Prints shown (or, with `--json`, `{name, said, shown, is_error, spill}`);
 * exits 0 on success, 1 when the result is an error. A tool's questions are answered from the
 * `--answer` values in order, or, without any, asked on the terminal.
 *
 * @module
 */
import { runTool } from "../runtime/run_tool.ts";
import { askOnTerminal, cliAnswers } from "./answers.ts";
import type { Approver } from "../policy/gate.ts";
import { CALL_OPTIONS } from "./options.ts";
import { APPROVAL, approvalOf } from "../terminal/choice.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, write, writeJson } from "./common.ts";

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Runs `magi call`. */
export async function callCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, CALL_OPTIONS);
  const [name, json, ...extra] = positionals;
  if (!name) throw new UsageError("magi call needs a tool name: magi call NAME [JSON|-]");
  if (extra.length > 0) {
    throw new UsageError(`magi call takes one JSON argument; got also ${JSON.stringify(extra)}`);
  }
  const rt = await runtimeFor(values, { calls: true });
  const controller = new AbortController();
  const result = await runTool(rt, {
    name,
    args: json === "-" ? await readStdin() : json ?? {},
    signal: controller.signal,
    // A person's own call: the policy's `ask` counts as approved (SPEC S8.1), unless
    // --as-model judges it as a model's call, with no one to ask.
    caller: values["as-model"] ? "model" : "person",
    answer: cliAnswers(values.answer ?? [], json !== "-" && Deno.stdin.isTerminal()),
    unanswered: "no terminal to ask on; `magi call --answer TEXT` supplies one",
    // A tool's request on the approvals socket is put to the person at the terminal.
    ...(!values["as-model"] && json !== "-" && Deno.stdin.isTerminal()
      ? { approve: terminalApprover }
      : {}),
  });
  if (values.json) {
    await writeJson(result);
  } else if (result.shown !== "") {
    await write(result.shown.endsWith("\n") ? result.shown : result.shown + "\n");
  }
  return result.is_error ? EXIT.toolError : EXIT.ok;
}

/** Asks the person at the terminal: yes, no, or always (for this call's session). */
const terminalApprover: Approver = async ({ tool, verdict }) => {
  const answer = await askOnTerminal({
    question: `allow ${tool}: ${verdict.reason}?`,
    choices: [...APPROVAL],
  });
  return answer === undefined ? undefined : approvalOf(answer);
};
