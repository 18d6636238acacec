/**
 * Recording an answer the person interrupted (Ctrl-C mid-stream) in `magi chat` and
 * `magi run`: the text that had streamed, as an assistant event marked `interrupted`, so
 * the next request tells the model its answer was cut (lib/agent/session.ts).
 *
 * @module
 */
import type { Session } from "../agent/session.ts";

/**
 * Appends the partial answer; nothing when no text had come or the answer was already
 * recorded (Ctrl-C came while its tools ran).
 */
export function recordInterrupted(session: Session, partial: string): void {
  if (partial.trim() === "") return;
  const last = session.events.at(-1);
  if (last?.type === "assistant" && last.text === partial) return;
  session.append({ type: "assistant", text: partial, tool_calls: [], interrupted: true });
}
