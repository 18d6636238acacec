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
import { runTool, type ToolResult } from "../pipeline/run_tool.ts";
import type { Runtime } from "../runtime.ts";
import { type Provider, type ToolCallRequest, turnWithRetries, type Usage } from "./provider.ts";
import type { Session } from "./session.ts";
import { ShownText } from "./shown_text.ts";

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
}

/** How the loop ended. */
export type EndReason = "done" | "max_turns" | "cancelled";

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
 * made (`max_turns`), or `signal` is aborted (`cancelled`). Every answer and tool result is
 * appended to the session as it completes.
 *
 * @throws ProviderError when the provider fails (after retries)
 */
export async function runAgent(opts: AgentOptions): Promise<EndReason> {
  const { rt, provider, session, signal, view } = opts;
  closeUnfinished(session);
  const tools = rt.registry.declarations();
  for (let turns = 0;; turns++) {
    if (signal?.aborted) return "cancelled";
    if (turns >= opts.maxTurns) return "max_turns";
    let result;
    // A retried stream's text is not printed again (only what goes beyond it); only the
    // finished attempt's answer and tool calls are recorded and run.
    const shown = new ShownText(view);
    try {
      result = await turnWithRetries(
        provider,
        {
          system: opts.system,
          messages: session.messages(),
          tools,
          signal,
          onText: (delta) => shown.text(delta),
        },
        opts.maxRetries,
        (message) => {
          view.retry(message);
          shown.retry();
        },
      );
      shown.finish();
    } catch (error) {
      if (signal?.aborted) return "cancelled";
      throw error;
    }
    session.append({ type: "assistant", text: result.text, tool_calls: result.tool_calls });
    view.answer(result.text);
    if (result.usage) {
      session.append({ type: "usage", ...result.usage });
      view.usage(result.usage);
    }
    if (result.tool_calls.length === 0) return "done";
    // Each result is recorded the moment it is ready (so a kill loses none); the session
    // gives them back to the model in call order, and the person sees them in that order.
    const running = result.tool_calls.map((call) => {
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
          ...imagesFor(rt, done),
        });
        return done;
      });
    });
    for (const [i, call] of result.tool_calls.entries()) view.toolResult(call, await running[i]);
  }
}

/** The images sent with a tool result (mcpb: lib/agent/images.ts; config limits.image_bytes). */
function imagesFor(rt: AgentOptions["rt"], done: ToolResult): { images?: ImageRef[] } {
  const images = imageRefs(done, rt.config.values["limits.image_bytes"] as number);
  return images.length ? { images } : {};
}
