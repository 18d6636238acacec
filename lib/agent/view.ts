/**
 * What the person sees of an agent run: the model's text as it streams, each tool call
 * and its `shown`, a one-line progress indicator (tool names, elapsed seconds) while tools
 * run on a terminal — or, with `--json`, one JSON event per line for scripts. Output is
 * plain (no colour, no progress line) when `NO_COLOR` is set or it is not a terminal.
 *
 * @module
 */
import type { ToolResult } from "../pipeline/run_tool.ts";
import type { AgentView } from "./loop.ts";
import type { ToolCallRequest, Usage } from "./provider.ts";

/** Where text goes: a synchronous writer (all of it is written). */
export type Sink = (text: string) => void;

/**
 * Writes all of `text` to a file such as `Deno.stdout`. A reader that went away (`| head`)
 * is not an error: the rest is dropped and the run goes on.
 */
export function sinkOf(file: { writeSync(p: Uint8Array): number }): Sink {
  const encoder = new TextEncoder();
  let gone = false;
  return (text) => {
    if (gone) return;
    const bytes = encoder.encode(text);
    try {
      let at = 0;
      while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
    } catch (error) {
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      gone = true;
    }
  };
}

/** How to draw. */
export interface ViewOptions {
  /** One JSON event per line on `out`, nothing else. */
  json: boolean;
  /** The model's text (stdout). */
  out: Sink;
  /** Tool calls, `shown`, notes (stderr for `magi run`, stdout for `magi chat`). */
  info: Sink;
  /** Colour and the progress line (a terminal, and NO_COLOR unset). */
  fancy: boolean;
  /** Where the progress line is drawn (stderr); only used when `fancy`. */
  progress?: Sink;
}

const DIM = "\x1b[2m";
const RED = "\x1b[31m";
const RESET = "\x1b[0m";

/** Shown (stderr for `magi run`) when a retried answer does not go on from the cut text. */
export const RESTART =
  "[magi: the provider's stream broke; the answer below starts over (the cut text above is not kept)]";

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** An {@link AgentView} for a terminal or a script. */
export class TerminalView implements AgentView {
  readonly #o: ViewOptions;
  #midLine = false;
  /** A retry note ended the screen's line while stdout's text is still mid-line. */
  #lineBroken = false;
  #running = new Map<string, { name: string; started: number }>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #progressShown = false;

  constructor(options: ViewOptions) {
    this.#o = options;
  }

  /** Whether events are printed as JSON lines. */
  get json(): boolean {
    return this.#o.json;
  }

  /** Emits one event (`--json` only). */
  event(event: Record<string, unknown>): void {
    if (this.#o.json) this.#o.out(JSON.stringify(event) + "\n");
  }

  /** A note for the person (stderr-like): plain text, or a `note` event. */
  note(message: string): void {
    if (this.#o.json) return this.event({ type: "note", message });
    this.#clearProgress();
    this.#endLine();
    this.#o.info(message + "\n");
  }

  text(delta: string): void {
    if (this.#o.json) return;
    this.#clearProgress();
    this.#o.out(delta);
    this.#midLine = !delta.endsWith("\n");
    this.#lineBroken = false;
  }

  answer(text: string): void {
    if (this.#o.json) {
      if (text !== "") this.event({ type: "text", text });
      return;
    }
    this.#endLine();
  }

  toolCall(call: ToolCallRequest): void {
    this.#running.set(call.id, { name: call.name, started: Date.now() });
    if (this.#o.json) {
      return this.event({
        type: "tool_call",
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      });
    }
    this.#clearProgress();
    this.#endLine();
    const line = `→ ${call.name} ${oneLine(call.arguments, 160)}`;
    this.#o.info(this.#o.fancy ? `${DIM}${line}${RESET}\n` : line + "\n");
    this.#startProgress();
  }

  toolResult(call: ToolCallRequest, result: ToolResult): void {
    this.#running.delete(call.id);
    if (this.#running.size === 0) this.#stopProgress();
    if (this.#o.json) {
      return this.event({
        type: "tool_result",
        id: call.id,
        name: result.name,
        said: result.said,
        shown: result.shown,
        is_error: result.is_error,
        spill: result.spill,
      });
    }
    this.#clearProgress();
    const head = result.is_error ? `✗ ${call.name} failed` : `✓ ${call.name}`;
    const colour = result.is_error ? RED : DIM;
    this.#o.info(this.#o.fancy ? `${colour}${head}${RESET}\n` : head + "\n");
    if (result.shown !== "") {
      this.#o.info(result.shown.endsWith("\n") ? result.shown : result.shown + "\n");
    }
  }

  usage(usage: Usage): void {
    this.event({ type: "usage", ...usage });
  }

  retry(message: string): void {
    if (this.#o.json) return this.event({ type: "retry", message });
    if (!this.#midLine || this.#o.info === this.#o.out) return this.note(`magi: ${message}`);
    // The cut text is mid-line on stdout and the answer may go on from it: the note breaks
    // the line on its own stream, so stdout still holds the answer alone.
    this.#clearProgress();
    this.#o.info(`${this.#lineBroken ? "" : "\n"}magi: ${message}\n`);
    this.#lineBroken = true;
  }

  restart(): void {
    if (this.#o.json) return;
    this.#clearProgress();
    this.#endLine();
    this.#o.info(this.#o.fancy ? `${DIM}${RESTART}${RESET}\n` : RESTART + "\n");
  }

  /** Stops the progress line; call before exiting. */
  close(): void {
    this.#stopProgress();
    this.#endLine();
  }

  #endLine(): void {
    if (this.#midLine) {
      this.#o.out("\n");
      this.#midLine = false;
    }
    this.#lineBroken = false;
  }

  #startProgress(): void {
    if (!this.#o.fancy || !this.#o.progress || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#drawProgress(), 1000);
  }

  #drawProgress(): void {
    if (this.#running.size === 0 || !this.#o.progress) return;
    const now = Date.now();
    const parts = [...this.#running.values()].map((r) =>
      `${r.name} ${Math.floor((now - r.started) / 1000)}s`
    );
    this.#o.progress(`\r\x1b[2K${DIM}⋯ ${oneLine(parts.join(", "), 100)}${RESET}`);
    this.#progressShown = true;
  }

  #clearProgress(): void {
    if (this.#progressShown && this.#o.progress) this.#o.progress("\r\x1b[2K");
    this.#progressShown = false;
  }

  #stopProgress(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clearProgress();
  }
}
