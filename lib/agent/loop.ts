/**
 * The turn loop: send the conversation to the provider, record its answer, run its tool
 * calls — all through `runTool`, the one pipeline; the calls of one answer concurrently,
 * their results given back in call order — and go again until the model answers without a
 * tool call. The model reads `said`; the person is shown `shown`.
 *
 * @module
 */
import { type ImageRef, imageRefs } from "./images.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import type { Approver } from "../policy/gate.ts";
import { runTool, type ToolResult } from "../runtime/run_tool.ts";
import type { Runtime } from "../runtime/runtime.ts";
import {
  ContextLengthError,
  type Provider,
  type ToolCallRequest,
  type TurnResult,
  turnWithRetries,
  type Usage,
} from "./provider.ts";
import type { Session } from "./session.ts";
import { ShownText } from "./shown_text.ts";
import { ContextKeeper, type ContextSettings } from "./compact.ts";
import { outcomeOf } from "./outcome.ts";

/** What the person is shown while the loop runs. */
export interface AgentView {
  /** A piece of the model's text as it streams. */
  text(delta: string): void;
  /** The model finished one answer (its whole text). */
  answer(text: string): void;
  toolCall(call: ToolCallRequest): void;
  /** A tool call's result (masked and bounded), in call order. */
  toolResult(call: ToolCallRequest, result: ToolResult): void;
  usage(usage: Usage): void;
  /** The provider's stream was cut and the turn is sent again. */
  retry(message: string): void;
  /**
   * The retried answer does not go on from the text already shown of a cut attempt: the
   * text that follows starts the answer over.
   */
  restart(): void;
  /** A piece of the model's reasoning as it streams: shown dimmed, never said. */
  reasoning?(delta: string): void;
  /** One line for the person about the run (an outcome, a compaction). */
  note?(message: string): void;
}

/**
 * How the loop ended: `done` (an answer), `max_turns`, `cancelled`, or an answer that is
 * not one (lib/agent/outcome.ts): `refused`, `cut` (the max_tokens limit), `no_answer`
 * (the model only reasoned).
 */
export type EndReason = "done" | "max_turns" | "cancelled" | "refused" | "cut" | "no_answer";

/** Everything the loop needs. */
export interface AgentOptions {
  rt: Runtime;
  provider: Provider;
  session: Session;
  system: string;
  /** The most model requests this call of {@link runAgent} makes. */
  maxTurns: number;
  /** Attempts after a cut stream. */
  maxRetries: number;
  /** Cancels the running model request or tool calls (Ctrl-C in `magi chat`). */
  signal?: AbortSignal;
  view: AgentView;
  /** Answers a tool's question (SPEC S3.6); without it a question ends as an error result. */
  answer?: AnswerProvider;
  /** Why a question gets no answer, and what would give one (see `AskOptions`). */
  unanswered?: string;
  /** Asks the person about a call the policy asks about; without it `ask` is a denial. */
  approve?: Approver;
  /** The context window and when to compact (config `providers.NAME`). */
  context?: ContextSettings;
  /** The longest answer asked for, in tokens (told in the line of a cut answer). */
  maxTokens?: number;
}

/** The said text of a call that never finished because magi ended first. */
export const UNFINISHED_NOTE =
  "[magi: this tool call did not finish: the session ended before its result was recorded]";

/**
 * Records an error result for each tool call of the last answer that has none (magi was
 * killed mid-turn), so the conversation can be sent again.
 */
export function closeUnfinished(session: Session): void {
  for (const call of session.unanswered()) {
    session.append({
      type: "tool_result",
      id: call.id,
      name: call.name,
      said: UNFINISHED_NOTE,
      is_error: true,
    });
  }
}

/**
 * Runs turns until the model answers without tool calls (`done`), `maxTurns` requests were
 * made (`max_turns`), `signal` is aborted (`cancelled`), or a turn is no answer (`refused`,
 * `cut`, `no_answer`: told in one `view.note` line). Every answer and tool result is
 * appended to the session as it completes. Before each request the conversation is kept
 * within the context window (lib/agent/compact.ts); a context-length error compacts once
 * and sends the turn once more.
 *
 * @throws ProviderError when the provider fails (after retries, or a second context-length
 *   error)
 */
export async function runAgent(opts: AgentOptions): Promise<EndReason> {
  const { rt, provider, session, signal, view } = opts;
  closeUnfinished(session);
  // Declarations in the registry's fixed order (sorted by name), so the prefix of every
  // request is byte-stable and the providers' prompt caches hit.
  const tools = rt.registry.declarations();
  const keeper = new ContextKeeper({
    provider,
    session,
    system: opts.system,
    tools,
    settings: opts.context,
    note: (message) => view.note?.(message),
  });
  await keeper.start();
  for (let turns = 0;; turns++) {
    if (signal?.aborted) return "cancelled";
    // Mail left for this session (lib/agent/subagents/mailbox.ts) is recorded and read at this turn.
    for (const m of rt.inbox?.() ?? []) {
      session.append({ type: "user", text: m.text, from: m.from });
      view.note?.(`(mail from ${m.from} delivered to the model)`);
    }
    if (turns >= opts.maxTurns) return "max_turns";
    let result: TurnResult | undefined;
    try {
      await keeper.fit(signal);
      // A provider that says the prompt is too long gets one compaction and one retry.
      for (let compacted = false; !result;) {
        const messages = session.messages();
        const estimated = keeper.estimate(messages);
        // A retried stream's text is not printed again (only what goes beyond it); only the
        // finished attempt's answer and tool calls are recorded and run.
        const shown = new ShownText(view);
        try {
          result = await turnWithRetries(
            provider,
            {
              system: opts.system,
              messages,
              tools,
              signal,
              onText: (delta) => shown.text(delta),
              onReasoning: (delta) => view.reasoning?.(delta),
            },
            opts.maxRetries,
            (message) => {
              view.retry(message);
              shown.retry();
            },
          );
          shown.finish();
        } catch (error) {
          if (!(error instanceof ContextLengthError) || compacted || signal?.aborted) throw error;
          compacted = true;
          if (!await keeper.fit(signal, true)) throw error;
          view.note?.(`magi: ${error.message}; compacted the conversation, sending it again`);
          continue;
        }
        if (result.usage) keeper.meter.observe(keeper.chars(messages), result.usage.input_tokens);
        if (result.usage) result.usage = { ...result.usage, estimated_tokens: estimated };
      }
    } catch (error) {
      if (signal?.aborted) return "cancelled";
      throw error;
    }
    const outcome = outcomeOf(result, opts.maxTokens);
    // A cut answer's tool calls may have lost the end of their arguments: none is run.
    const calls = outcome.kind === "cut" ? [] : result.tool_calls;
    session.append({
      type: "assistant",
      text: result.text || (result.refusal ?? ""),
      tool_calls: calls,
      ...(outcome.kind !== "answered" ? { stop: result.stop } : {}),
      ...(result.reasoning ? { reasoning: result.reasoning } : {}),
      ...(result.thinking ? { thinking: result.thinking } : {}),
    });
    view.answer(result.text);
    if (result.usage) {
      session.append({ type: "usage", ...result.usage });
      view.usage(result.usage);
    }
    if (outcome.kind !== "answered") {
      view.note?.(`magi: ${outcome.line}`);
      return outcome.kind;
    }
    if (calls.length === 0) return "done";
    // Each result is recorded the moment it is ready (so a kill loses none); the session
    // gives them back to the model in call order, and the person sees them in that order.
    const running = calls.map((call) => {
      view.toolCall(call);
      const toolCall = {
        name: call.name,
        args: call.arguments,
        signal,
        answer: opts.answer,
        unanswered: opts.unanswered,
        approve: opts.approve,
      };
      return runTool(rt, toolCall).then((done) => {
        session.append({
          type: "tool_result",
          id: call.id,
          name: call.name,
          said: done.said,
          is_error: done.is_error,
          ...imagesFor(rt, done, session.dir),
        });
        return done;
      });
    });
    for (const [i, call] of calls.entries()) view.toolResult(call, await running[i]);
  }
}

/** The images sent with a tool result (mcpb: lib/agent/images.ts; config limits.image_bytes). */
function imagesFor(
  rt: AgentOptions["rt"],
  done: ToolResult,
  sessionDir: string,
): { images?: ImageRef[] } {
  const images = imageRefs(done, rt.config.values["limits.image_bytes"] as number, sessionDir);
  return images.length ? { images } : {};
}
