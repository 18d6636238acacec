/**
 * What the person sees of an agent run: the model's text as it streams, each tool call
 * and its `shown`, a one-line progress indicator (tool names, elapsed seconds) while tools
 * run on a terminal — or, with `--json`, one JSON event per line for scripts. Output is
 * plain (no colour, no progress line) when `NO_COLOR` is set or it is not a terminal.
 * Everything is written through `lib/output/out.ts`: masked, and on a terminal the model's
 * text, tool names, arguments and `shown` have their control characters shown visibly; only
 * the view's own styling carries escapes.
 *
 * @module
 */
import { Output, type OutputStream, type Sink } from "../output/out.ts";
import type { ToolResult } from "../pipeline/run_tool.ts";
import type { AgentView } from "./loop.ts";
import type { ToolCallRequest, Usage } from "./provider.ts";

/** How to draw. */
export interface ViewOptions {
  /** One JSON event per line on `out`, nothing else. */
  json: boolean;
  /** The model's text (stdout); a function receives masked text (tests). */
  out: Output | Sink;
  /** Tool calls, `shown`, notes (stderr for `magi run`, stdout for `magi chat`). */
  info: Output | Sink;
  /** Colour and the progress line (a terminal, and NO_COLOR unset). */
  fancy: boolean;
  /** Where the progress line is drawn (stderr); only used when `fancy`. */
  progress?: Output | Sink;
}

function outputOf(o: Output | Sink): Output {
  return o instanceof Output ? o : Output.sink(o);
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
  readonly #json: boolean;
  readonly #fancy: boolean;
  readonly #out: Output;
  readonly #info: Output;
  readonly #progress: Output | undefined;
  /** Whether notes go to the same place as the model's text (`magi chat`). */
  readonly #shared: boolean;
  /** The model's text of the answer being streamed, masked across its pieces. */
  #text: OutputStream | undefined;
  #midLine = false;
  /** A retry note ended the screen's line while stdout's text is still mid-line. */
  #lineBroken = false;
  #running = new Map<string, { name: string; started: number }>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #progressShown = false;
  /** The model's reasoning being streamed (dimmed on the info stream), masked across pieces. */
  #thought: OutputStream | undefined;

  constructor(options: ViewOptions) {
    this.#json = options.json;
    this.#fancy = options.fancy;
    this.#out = outputOf(options.out);
    this.#shared = options.info === options.out;
    this.#info = this.#shared ? this.#out : outputOf(options.info);
    this.#progress = options.progress === undefined
      ? undefined
      : options.progress === options.out
      ? this.#out
      : options.progress === options.info
      ? this.#info
      : outputOf(options.progress);
  }

  /** Whether events are printed as JSON lines. */
  get json(): boolean {
    return this.#json;
  }

  /** Emits one event (`--json` only): one masked JSON line. */
  event(event: Record<string, unknown>): void {
    if (this.#json) this.#out.json(event);
  }

  /** A note for the person (stderr-like): plain text, or a `note` event. */
  note(message: string): void {
    if (this.#json) return this.event({ type: "note", message });
    this.#endThought();
    this.#clearProgress();
    this.#endLine();
    this.#info.text(message + "\n");
  }

  text(delta: string): void {
    if (this.#json) return;
    this.#endThought();
    this.#clearProgress();
    (this.#text ??= this.#out.stream()).push(delta);
    this.#midLine = !delta.endsWith("\n");
    this.#lineBroken = false;
  }

  answer(text: string): void {
    if (this.#json) {
      if (text !== "") this.event({ type: "text", text });
      return;
    }
    this.#endThought();
    this.#endLine();
  }

  /** A piece of the model's reasoning: dimmed where notes go, never on stdout's answer. */
  reasoning(delta: string): void {
    if (this.#json) return this.event({ type: "reasoning", text: delta });
    this.#clearProgress();
    if (!this.#thought) {
      this.#endLine();
      if (this.#fancy) this.#info.own(DIM);
      this.#thought = this.#info.stream();
    }
    this.#thought.push(delta);
  }

  #endThought(): void {
    if (!this.#thought) return;
    this.#thought.end();
    this.#thought = undefined;
    this.#info.own(this.#fancy ? `${RESET}\n` : "\n");
  }

  toolCall(call: ToolCallRequest): void {
    this.#running.set(call.id, { name: call.name, started: Date.now() });
    if (this.#json) {
      return this.event({
        type: "tool_call",
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      });
    }
    this.#endThought();
    this.#clearProgress();
    this.#endLine();
    // Masked before it is shortened: a cut through a secret would leave its start unmasked.
    const line = this.#info.mask(`→ ${call.name} ${call.arguments}`);
    this.#styled(DIM, oneLine(line, 160 + call.name.length + 3));
    this.#startProgress();
  }

  toolResult(call: ToolCallRequest, result: ToolResult): void {
    this.#running.delete(call.id);
    if (this.#running.size === 0) this.#stopProgress();
    if (this.#json) {
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
    this.#styled(result.is_error ? RED : DIM, head);
    if (result.shown !== "") {
      this.#info.text(result.shown.endsWith("\n") ? result.shown : result.shown + "\n");
    }
  }

  usage(usage: Usage): void {
    this.event({ type: "usage", ...usage });
  }

  retry(message: string): void {
    if (this.#json) return this.event({ type: "retry", message });
    if (!this.#midLine || this.#shared) return this.note(`magi: ${message}`);
    // The cut text is mid-line on stdout and the answer may go on from it: the note breaks
    // the line on its own stream, so stdout still holds the answer alone.
    this.#clearProgress();
    this.#info.text(`${this.#lineBroken ? "" : "\n"}magi: ${message}\n`);
    this.#lineBroken = true;
  }

  restart(): void {
    if (this.#json) return;
    this.#clearProgress();
    this.#endLine();
    this.#styled(DIM, RESTART);
  }

  /** Stops the progress line; call before exiting. */
  close(): void {
    this.#endThought();
    this.#stopProgress();
    this.#endLine();
  }

  /** One line of foreign text, dim or red on a terminal with colour. */
  #styled(colour: string, line: string): void {
    if (this.#shared) this.#flushText();
    if (this.#fancy) this.#info.own(colour);
    this.#info.text(line);
    this.#info.own(this.#fancy ? `${RESET}\n` : "\n");
  }

  /** Writes the held-back end of the model's text (its answer ended, or a note follows). */
  #flushText(): void {
    this.#text?.end();
  }

  #endLine(): void {
    this.#flushText();
    if (this.#midLine) {
      this.#out.own("\n");
      this.#midLine = false;
    }
    this.#lineBroken = false;
  }

  #startProgress(): void {
    if (!this.#fancy || !this.#progress || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#drawProgress(), 1000);
  }

  #drawProgress(): void {
    const progress = this.#progress;
    if (this.#running.size === 0 || !progress) return;
    const now = Date.now();
    const parts = [...this.#running.values()].map((r) =>
      `${r.name} ${Math.floor((now - r.started) / 1000)}s`
    );
    progress.own(`\r\x1b[2K${DIM}⋯ `);
    progress.text(oneLine(progress.mask(parts.join(", ")), 100));
    progress.own(RESET);
    this.#progressShown = true;
  }

  #clearProgress(): void {
    if (this.#progressShown && this.#progress) this.#progress.own("\r\x1b[2K");
    this.#progressShown = false;
  }

  #stopProgress(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clearProgress();
  }
}
