/**
 * The status line: one line at the bottom of what magi has written, redrawn in place while
 * the model works or tools run — a spinner, what is happening, the elapsed seconds, the
 * tokens so far, and a retry's wait (`retrying in 2 s (429)`). It is the only thing magi
 * redraws. Whoever writes anything else hides it first ({@link StatusLine.hide}); a prompt
 * pauses it ({@link StatusLine.pause}) so nothing is ever drawn over `allow>` or `answer>`,
 * and it comes back when the answer is in. Drawn only on a terminal, through the masked
 * writer (`lib/pipeline/out.ts`); its width is measured with `string-width` and its frames
 * come from `cli-spinners`.
 *
 * @module
 */
import spinners from "cli-spinners";
import stringWidth from "string-width";
import type { Output } from "../pipeline/out.ts";

const DIM = "\x1b[2m";
const RESET = "\x1b[0m";
const ERASE = "\r\x1b[2K";

/** How a status line is made. */
export interface StatusOptions {
  /** Where it is drawn (a terminal). */
  out: Output;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
  /** The terminal's width in columns; default: the console's, else 80. */
  columns?: () => number;
  /** Whether the cursor is at the start of a line, where the line may be drawn. */
  atLineStart?: () => boolean;
}

function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns || 80;
  } catch {
    return 80;
  }
}

/** Cuts `text` to at most `columns` terminal cells (wide characters count two). */
export function fitWidth(text: string, columns: number): string {
  if (stringWidth(text) <= columns) return text;
  let out = "";
  for (const ch of text) {
    if (stringWidth(out + ch + "…") > columns) break;
    out += ch;
  }
  return out + "…";
}

/** A status line on a terminal. */
export class StatusLine {
  readonly #out: Output;
  readonly #now: () => number;
  readonly #columns: () => number;
  readonly #atLineStart: () => boolean;
  readonly #frames = spinners.dots.frames;
  #frame = 0;
  #label: string | undefined;
  #since = 0;
  #tokens = 0;
  #retry: { until: number; why: string } | undefined;
  #paused = 0;
  #drawn = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: StatusOptions) {
    this.#out = options.out;
    this.#now = options.now ?? Date.now;
    this.#columns = options.columns ?? consoleColumns;
    this.#atLineStart = options.atLineStart ?? (() => true);
  }

  /** Whether it is shown now. */
  get drawn(): boolean {
    return this.#drawn;
  }

  /** What the line says (without spinner or times), or undefined when idle. */
  get label(): string | undefined {
    return this.#label;
  }

  /** Starts (or relabels) the line: `thinking`, `run 2s`; the clock starts at the first. */
  show(label: string): void {
    if (this.#label === undefined) {
      this.#since = this.#now();
      this.#tokens = 0;
    }
    this.#label = label;
    this.#timer ??= setInterval(() => this.draw(), spinners.dots.interval);
    this.draw();
  }

  /** The tokens of this request so far (shown as `↓ N tokens`). */
  tokens(n: number): void {
    this.#tokens = n;
  }

  /** A retry is waiting `ms` milliseconds; `why` is `429`, `connection failed`… */
  retrying(ms: number, why: string): void {
    this.#retry = { until: this.#now() + ms, why };
    this.draw();
  }

  /** The retry went out: its wait leaves the line. */
  retried(): void {
    if (this.#retry === undefined) return;
    this.#retry = undefined;
    this.draw();
  }

  /** Hides the line so something else can be written where it was; it comes back. */
  hide(): void {
    if (this.#drawn) this.#out.own(ERASE);
    this.#drawn = false;
  }

  /** Hides it until {@link resume}: a prompt is on the screen. Nests. */
  pause(): void {
    this.#paused++;
    this.hide();
  }

  resume(): void {
    if (this.#paused > 0) this.#paused--;
    this.draw();
  }

  /** Stops and erases it (the work is done). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#label = undefined;
    this.#retry = undefined;
    this.hide();
  }

  /** The text of the line now, without styling. */
  line(): string {
    const now = this.#now();
    const parts = [`${this.#frames[this.#frame % this.#frames.length]} ${this.#label}`];
    parts.push(`${Math.floor((now - this.#since) / 1000)}s`);
    if (this.#tokens > 0) parts.push(`↓ ${this.#tokens} tokens`);
    if (this.#retry) {
      const left = this.#retry.until - now;
      if (left > 0) parts.push(`retrying in ${Math.ceil(left / 1000)} s (${this.#retry.why})`);
      else this.#retry = undefined;
    }
    parts.push("Ctrl-C to stop");
    return parts.join(" · ");
  }

  /** Draws the line now (the timer calls this). */
  draw(): void {
    if (this.#label === undefined || this.#paused > 0 || !this.#atLineStart()) return;
    this.#frame++;
    const text = fitWidth(this.#out.mask(this.line()), Math.max(10, this.#columns() - 1));
    this.#out.own(`${ERASE}${DIM}`);
    this.#out.text(text);
    this.#out.own(RESET);
    this.#drawn = true;
  }
}
