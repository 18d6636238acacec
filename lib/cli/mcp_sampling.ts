/**
 * How `magi chat` answers MCP servers' `sampling/createMessage` (lib/sources/mcp/sampling.ts):
 * the person is asked at the prompt, then the session's provider answers one turn without
 * tools. `magi run` refuses them, saying why.
 *
 * @module
 */
import type { Message, Provider } from "../agent/provider.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import type { SamplingHost } from "../sources/mcp/sampling.ts";

/** Why `magi run` (with or without `--auto`) refuses a server's sampling request. */
export const RUN_REFUSAL = "`magi run` has no one to ask (only `magi chat` answers " +
  "sampling/createMessage, after asking you)";

/**
 * The sampling host of `magi chat`.
 *
 * @param provider the session's provider now (`/model` may switch it)
 * @param ask asks the person at the prompt
 */
export function chatSampling(provider: () => Provider, ask: AnswerProvider): SamplingHost {
  return {
    ask,
    complete: async (turn) => {
      const p = provider();
      const messages: Message[] = turn.messages.map((m) =>
        m.role === "user"
          ? { role: "user", text: m.text }
          : { role: "assistant", text: m.text, tool_calls: [] }
      );
      const done = await p.turn({
        system: turn.system,
        messages,
        tools: [],
        ...(turn.signal ? { signal: turn.signal } : {}),
        ...(turn.maxTokens ? { maxTokens: turn.maxTokens } : {}),
      });
      return { text: done.text, model: p.model, stop: done.stop };
    },
  };
}
