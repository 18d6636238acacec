/**
 * What the person sees of an agent run: the model's text as it streams (rendered as
 * markdown on a terminal when given a renderer), each tool call and its `shown` (cut to
 * `display.lines` lines, the whole kept in a file), the status line while the model works
 * and tools run (lib/terminal/status_line.ts: spinner, elapsed, tokens, retries), the
 * tokens each request used — or, with `--json`, one JSON event per line for scripts. Output
 * is plain (no colour, no status line, no markdown) when `NO_COLOR` is set or it is not a
 * terminal; with `hold` (stdout is not a terminal) the answer is written once its attempt
 * finished, so a retried answer leaves no abandoned text.
 * Everything is written through `lib/pipeline/out.ts`: masked, and on a terminal the model's
 * text, tool names, arguments and `shown` have their control characters shown visibly; only
 * the view's own styling carries escapes.
 *
 * @module
 */
import { Output, type OutputStream, type Sink } from "../pipeline/out.ts";
import type { ToolResult } from "../runtime/run_tool.ts";
import ansiEscapes from "ansi-escapes";
import stringWidth from "string-width";
import { capLines, moreLine } from "./display_cap.ts";
import { type Counts, describeCounts, Tally } from "./cost.ts";
import { MarkdownBlocks, type Render } from "./markdown.ts";
import { StatusLine } from "./status_line.ts";
import { terminalSafe } from "../core/terminal_safe.ts";
import { describeRetry, type HttpRetry, type HttpWatch } from "../agent/http_watch.ts";
import type { AgentView } from "../agent/loop.ts";
import type { ToolCallRequest, Usage } from "../agent/provider.ts";

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
  /** Where the status line is drawn (stderr); only used when `fancy`. */
  progress?: Output | Sink;
  /** Hold the model's text until its attempt finished (stdout is not a terminal). */
  hold?: boolean;
  /** Renders whole markdown blocks (a terminal with colour); raw text without it. */
  render?: Render;
  /** The most lines of a tool's shown written (config `display.lines`); default: all. */
  lines?: number;
  /** Keeps a whole shown that was cut; returns the file's path. */
  keep?: (name: string, shown: string) => string | undefined;
  /** The terminal's width in columns (tests). */
  columns?: () => number;
  /** Told each request's token counts. */
  onUsage?: (usage: Usage) => void;
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
  readonly #status: StatusLine | undefined;
  readonly #hold: boolean;
  #held = "";
  readonly #render: Render | undefined;
  readonly #blocks = new MarkdownBlocks();
  readonly #lines: number | undefined;
  readonly #keep: ViewOptions["keep"];
  readonly #columns: () => number;
  readonly #onUsage: ViewOptions["onUsage"];
  /** Rows of the model's text on the screen since its answer (re)started. */
  #rows = 0;
  /** Characters streamed in this request (for the status line's token estimate). */
  #streamed = 0;
  /** Output tokens reported since {@link begin}. */
  #spent = new Tally();
  /** Retry notes written since the answer (re)started (a restart writes them again). */
  #notes: string[] = [];
  /** The text of the answer streaming now (what an interruption leaves). */
  #partial = "";
  /** The whole of the last tool call's shown, for `/last`. */
  lastShown: { name: string; shown: string; path?: string } | undefined;
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
    this.#hold = options.hold === true && !options.json;
    this.#render = options.fancy ? options.render : undefined;
    this.#lines = options.lines;
    this.#keep = options.keep;
    this.#onUsage = options.onUsage;
    this.#columns = options.columns ?? (() => {
      try {
        return Deno.consoleSize().columns || 80;
      } catch {
        return 80;
      }
    });
    this.#status = this.#fancy && this.#progress && !this.#json
      ? new StatusLine({
        out: this.#progress,
        columns: this.#columns,
        atLineStart: () => !this.#midLine,
      })
      : undefined;
  }

  /** Takes the text of an answer that was cut short (Ctrl-C): what the person saw of it. */
  takePartial(): string {
    const text = this.#partial;
    this.#partial = "";
    return text;
  }

  /** The status line, for prompts to pause (undefined when not drawn). */
  get status(): StatusLine | undefined {
    return this.#status;
  }

  /** A request begins: the status line says the model is working. */
  begin(): void {
    this.#spent = new Tally();
    this.#streamed = 0;
    this.#status?.show("thinking");
  }

  /** The request is over: the status line goes and the tokens it used are shown dimly. */
  done(): void {
    this.#status?.stop();
    this.#endLine();
    if (this.#json || this.#spent.turns === 0) return;
    const s = this.#spent;
    this.#styled(DIM, `tokens: ${describeCounts(s.input, s.output, s.cached)}`);
  }

  /** The SDK is about to retry an HTTP request: shown on the status line, else a note. */
  httpRetry(retry: HttpRetry): void {
    if (this.#json) return this.event({ type: "retry", message: describeRetry(retry) });
    if (this.#status) {
      const why = retry.status === undefined ? "connection failed" : String(retry.status);
      this.#status.retrying(retry.delayMs, why);
    } else this.note(`magi: ${describeRetry(retry)}`);
  }

  /** A retry announced by {@link httpRetry} was sent: the status line stops counting down. */
  httpRetried(): void {
    this.#status?.retried();
  }

  /** Shows the SDK's retries of `http`'s requests here (status line, note or event). */
  follow(http: HttpWatch): void {
    http.listener = (retry) => this.httpRetry(retry);
    http.sent = () => this.httpRetried();
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
    this.#partial += delta;
    if (this.#json) return;
    this.#endThought();
    this.#streamed += delta.length;
    this.#status?.tokens(this.#spent.output + Math.round(this.#streamed / 4));
    if (this.#hold) {
      this.#held += delta;
      return;
    }
    if (this.#render) {
      const blocks = this.#blocks.push(delta);
      if (blocks.length > 0) this.#clearProgress();
      for (const block of blocks) this.#writeBlock(block);
      return;
    }
    this.#clearProgress();
    (this.#text ??= this.#out.stream()).push(delta);
    this.#midLine = !delta.endsWith("\n");
    this.#lineBroken = false;
    this.#count(delta);
  }

  answer(text: string): void {
    this.#partial = "";
    if (this.#json) {
      if (text !== "") this.event({ type: "text", text });
      return;
    }
    this.#endThought();
    this.#held = "";
    if (this.#hold && text !== "") {
      this.#out.text(text);
      this.#midLine = !text.endsWith("\n");
    }
    if (this.#render) {
      const rest = this.#blocks.end();
      if (rest !== "") {
        this.#clearProgress();
        this.#writeBlock(rest);
      }
    }
    this.#endLine();
    this.#rows = 0;
    this.#notes = [];
    this.#streamed = 0;
    this.#status?.show("working");
  }

  /** One whole markdown block: masked and made safe, then rendered. */
  #writeBlock(block: string): void {
    const safe = terminalSafe(this.#out.mask(block));
    const rendered = this.#render!(safe).replace(/\n+$/, "") + "\n";
    const text = (this.#rows > 0 ? "\n" : "") + rendered;
    this.#out.own(text);
    this.#count(text);
    this.#midLine = false;
  }

  /** Counts the rows `text` takes on the screen. */
  #count(text: string): void {
    const columns = Math.max(1, this.#columns());
    const lines = text.split("\n");
    for (const [i, line] of lines.entries()) {
      if (i === lines.length - 1) break; // the part after the last line feed goes on
      this.#rows += Math.max(1, Math.ceil(stringWidth(line) / columns));
    }
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
    const { id, name, arguments: args } = call;
    if (this.#json) return this.event({ type: "tool_call", id, name, arguments: args });
    this.#endThought();
    this.#clearProgress();
    this.#endLine();
    this.#rows = 0;
    // Masked before it is shortened: a cut through a secret would leave its start unmasked.
    const line = this.#info.mask(`→ ${call.name} ${call.arguments}`);
    this.#styled(DIM, oneLine(line, 160 + call.name.length + 3));
    this.#startProgress();
  }

  /** The status line's label for the running tools. */
  #runningLabel(): string {
    const names = [...new Set([...this.#running.values()].map((r) => r.name))];
    return `running ${oneLine(names.join(", "), 60)}`;
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
      const { head: shown, more } = this.#lines === undefined
        ? { head: result.shown.endsWith("\n") ? result.shown : result.shown + "\n", more: 0 }
        : capLines(result.shown, this.#lines);
      this.#info.text(shown);
      let path: string | undefined;
      if (more > 0) {
        try {
          path = this.#keep?.(call.name, result.shown);
        } catch { /* kept in memory for /last all the same */ }
        this.#styled(DIM, moreLine(more, path));
      }
      this.lastShown = { name: call.name, shown: result.shown, path };
    }
    if (this.#running.size > 0) this.#status?.show(this.#runningLabel());
    else this.#status?.show("thinking");
  }

  usage(usage: Usage): void {
    this.#spent.add(usage as Counts);
    this.#onUsage?.(usage);
    this.event({ type: "usage", ...usage });
  }

  retry(message: string): void {
    if (this.#json) return this.event({ type: "retry", message });
    if (this.#shared) {
      // The note joins what a restart erases on the screen (and is written again after).
      if (this.#midLine) this.#rows++;
      this.#notes.push(`magi: ${message}`);
      this.note(`magi: ${message}`);
      this.#count(`magi: ${message}\n`);
      return;
    }
    if (!this.#midLine) return this.note(`magi: ${message}`);
    // The cut text is mid-line on stdout and the answer may go on from it: the note breaks
    // the line on its own stream, so stdout still holds the answer alone.
    this.#clearProgress();
    this.#info.text(`${this.#lineBroken ? "" : "\n"}magi: ${message}\n`);
    this.#lineBroken = true;
  }

  restart(): void {
    this.#partial = "";
    if (this.#json) return;
    this.#blocks.reset();
    if (this.#hold) return; // nothing of the abandoned attempt was written
    this.#clearProgress();
    this.#endLine();
    // On a terminal the abandoned text is erased when it is all still on the screen.
    const screenRows = (() => {
      try {
        return Deno.consoleSize().rows;
      } catch {
        return 0;
      }
    })();
    if (this.#fancy && this.#rows > 0 && this.#rows < screenRows && this.#shared) {
      this.#out.own(ansiEscapes.eraseLines(this.#rows + 1));
      this.#rows = 0;
      const notes = this.#notes;
      this.#notes = [];
      for (const note of notes) this.note(note);
      return;
    }
    this.#rows = 0;
    this.#notes = [];
    this.#styled(DIM, RESTART);
  }

  /** Stops the status line; call before exiting. An answer cut short is written as is. */
  close(): void {
    this.#endThought();
    this.#stopProgress();
    if (this.#held !== "") {
      this.#out.text(this.#held);
      this.#midLine = !this.#held.endsWith("\n");
      this.#held = "";
    }
    if (this.#render) {
      const rest = this.#blocks.end();
      if (rest !== "") this.#writeBlock(rest);
    }
    this.#endLine();
  }

  /** The partial answer not yet written (a cut or interrupted stream), written now. */
  flush(): void {
    if (this.#render) {
      const rest = this.#blocks.end();
      if (rest !== "") {
        this.#clearProgress();
        this.#writeBlock(rest);
      }
    }
    if (this.#held !== "") {
      this.#out.text(this.#held);
      this.#midLine = !this.#held.endsWith("\n");
      this.#held = "";
    }
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
    this.#status?.show(this.#runningLabel());
  }

  #clearProgress(): void {
    this.#status?.hide();
  }

  #stopProgress(): void {
    this.#status?.stop();
  }
}
