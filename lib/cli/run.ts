/**
 * `magi run "task"`: one task, non-interactive. The model's answer streams to stdout; tool
 * calls and what they show go to stderr (or, with `--json`, every event is one JSON line on
 * stdout); a tool's question is answered from `--answer` values, in order. Exit status: 0 when the
 * model finished, 1 on a provider failure, 2 for a usage or config error, 3 when
 * `--max-turns` was hit, 4 when the model refused, 5 when its answer was cut at max_tokens,
 * 6 when it reasoned without answering, 130 when interrupted.
 *
 * @module
 */
import { RUN_REFUSAL } from "./mcp_sampling.ts";
import { setMcpSampling } from "../sources/mcp/sampling.ts";
import { closeUnfinished, runAgent } from "../agent/loop.ts";
import { ProviderError } from "../agent/provider.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import { ProviderConfigError } from "../agent/providers.ts";
import type { Session } from "../agent/session.ts";
import { type Agent, agentSettings, startAgent } from "../agent/start.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { TerminalView } from "../terminal/view.ts";
import { stderr, stdout } from "../pipeline/out.ts";
import { EXIT, parseCommand, runtimeFor, UsageError, warn } from "./common.ts";
import { claimInterrupts } from "../exec/spawn.ts";
import { sessionStartHook, userPromptHook } from "../runtime/hooks/session_hooks.ts";
import { RUN_OPTIONS } from "./options.ts";
import { choicesLine, normaliseAnswer } from "../terminal/choice.ts";
import { loadRenderer } from "../terminal/markdown.ts";
import { recordInterrupted } from "./interrupted.ts";

/**
 * Builds the runtime and starts (or resumes) the agent for `magi run` and `magi chat`. A
 * provider config problem is a usage error; a session that cannot be opened is one stderr
 * line and exit status 2 (returned as a number).
 */
export async function startFromFlags(
  values: Parameters<typeof startAgent>[1] & Parameters<typeof runtimeFor>[0],
): Promise<{ rt: Runtime; agent: Agent } | number> {
  const rt = await runtimeFor(values, { calls: true });
  // --auto acts without asking: only inside a sandbox, unless the person said --sandbox off.
  if (rt.door.approval === "never" && rt.door.mode !== "off" && rt.door.problem) {
    warn(
      `${values.auto ? "--auto" : 'approval "never"'} needs a working sandbox, and ` +
        `${rt.door.problem}; give --sandbox off too to run the model's commands unsandboxed`,
    );
    return EXIT.usage;
  }
  try {
    const agent = startAgent(rt, values);
    await sessionStartHook(rt, values.resume ? "resume" : "startup");
    return { rt, agent };
  } catch (error) {
    if (error instanceof ProviderConfigError) throw new UsageError(error.message);
    warn((error as Error).message);
    return EXIT.usage;
  }
}

/**
 * Exit statuses of `magi run` beyond {@link EXIT}: 1 the provider failed, 3 `--max-turns`
 * was hit, 4 the model refused, 5 the answer was cut at max_tokens, 6 the model reasoned
 * but gave no answer, 130 interrupted.
 */
export const RUN_EXIT = {
  providerFailed: 1,
  maxTurns: 3,
  max_turns: 3,
  refused: 4,
  cut: 5,
  no_answer: 6,
  interrupted: 130,
  cancelled: 130,
} as const;

/**
 * Answers tools' questions from `--answer` values, in order; once they run out a question
 * ends as an error result the model reads. Each question and its answer are shown.
 */
export function answersFrom(values: string[], view: TerminalView): AnswerProvider {
  const left = [...values];
  return (question) => {
    const given = left.shift();
    const answer = given === undefined ? undefined : normaliseAnswer(given, question.choices);
    view.event({ type: "question", ...question, answer: answer ?? null });
    const choices = question.choices?.length ? ` ${choicesLine(question.choices)}` : "";
    if (!view.json) {
      view.note(`? ${question.question}${choices} → ${answer ?? "(no --answer left)"}`);
    }
    return Promise.resolve(answer);
  };
}

/** Parses `--max-turns` (default 50). */
export function maxTurnsOf(value: string | undefined): number {
  if (value === undefined) return 50;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--max-turns must be a whole number of at least 1, got "${value}"`);
  }
  return n;
}

/** Whether output may have colour and a progress line. */
export function fancyOutput(): boolean {
  return Deno.stderr.isTerminal() && !Deno.env.get("NO_COLOR");
}

/** Whether a session's last message is an answer with no tool call: nothing is pending. */
function finished(session: Session): boolean {
  const last = session.messages().at(-1);
  return last?.role === "assistant" && last.tool_calls.length === 0;
}

/** Runs `magi run`. */
export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, RUN_OPTIONS);
  let task = positionals.join(" ");
  if (task === "-") task = await new Response(Deno.stdin.readable).text();
  if (task.trim() === "" && !values.resume) {
    throw new UsageError('magi run needs a task: magi run "what to do"');
  }
  const maxTurns = maxTurnsOf(values["max-turns"]);
  const json = values.json ?? false;
  // On a terminal with colour the answer is rendered as markdown; the renderer loads meanwhile.
  const rendering = !json && Deno.stdout.isTerminal() && fancyOutput()
    ? loadRenderer(Math.min(Deno.consoleSize().columns || 80, 100)).catch(() => undefined)
    : Promise.resolve(undefined);
  const started = await startFromFlags(values);
  if (typeof started === "number") return started;
  const { rt, agent } = started;
  setMcpSampling(RUN_REFUSAL);
  const view = new TerminalView({
    json,
    out: stdout,
    info: stderr,
    fancy: !json && fancyOutput(),
    progress: stderr,
    // Piped, the answer is written when its attempt finished: a retry leaves nothing behind.
    hold: !Deno.stdout.isTerminal(),
    render: await rendering,
    ...(Deno.stderr.isTerminal()
      ? {
        lines: rt.config.values["display.lines"],
      }
      : {}),
  });
  view.follow(agent.http);
  const { session } = agent;
  // A resumed session killed mid-turn: its calls' results must come before the new text.
  const held = task.trim() === "" ? undefined : await userPromptHook(rt, task);
  if (held) {
    view.note(held);
    session.close();
    view.close();
    return EXIT.usage;
  }
  if (task.trim() !== "") {
    closeUnfinished(session);
    session.append({ type: "user", text: task });
  } else if (finished(session)) {
    session.close();
    throw new UsageError(
      `session "${session.id}" is finished; give a task to go on: magi run --resume ${session.id} "…"`,
    );
  }
  view.event({ type: "session", id: session.id, dir: session.dir });

  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  Deno.addSignalListener("SIGINT", onInterrupt);
  const releaseInterrupts = claimInterrupts();
  let status: number;
  let reason: string;
  view.begin();
  try {
    const ended = await runAgent({
      rt,
      provider: agent.provider,
      session,
      ...agentSettings(agent),
      maxTurns,
      signal: controller.signal,
      view,
      answer: answersFrom(values.answer ?? [], view),
      unanswered: "`magi run` has no one to ask: answers come from its `--answer TEXT`, none left",
    });
    reason = ended;
    status = ended === "done" ? EXIT.ok : RUN_EXIT[ended];
    if (reason === "cancelled") recordInterrupted(session, view.takePartial());
    if (reason === "max_turns") {
      view.note(`magi: stopped after --max-turns ${maxTurns} model requests`);
    }
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    reason = "provider_failed";
    status = RUN_EXIT.providerFailed;
    view.event({ type: "error", message: rt.masker.maskText(error.message) });
    if (!json) view.note(`magi: ${rt.masker.maskText(error.message)}`);
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    releaseInterrupts();
    view.done();
    view.close();
  }
  session.append({ type: "end", reason });
  session.close();
  view.event({ type: "end", reason, session: session.id });
  if (!json) view.note(`magi: session ${session.id}`);
  return status;
}
