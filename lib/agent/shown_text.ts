/**
 * The text of one turn as the person has been shown it, across the attempts of a retried
 * stream. Text streams to the screen as it comes; when a stream is cut and the turn is sent
 * again, the new attempt's text is not printed a second time: while it repeats what is
 * already on the screen it is held back, the part beyond that is printed as a continuation,
 * and if it goes another way (or ends short of what was shown) the view is told that the
 * answer starts over, and the new text is printed whole after that.
 *
 * @module
 */

/** Where a turn's text goes: the part of {@link AgentView} this needs. */
export interface TextSink {
  /** Prints a piece of the model's text. */
  text(delta: string): void;
  /** The text shown so far is not how the answer goes: what follows starts it over. */
  restart(): void;
}

/**
 * Filters one turn's streamed text so that a retry never prints again what the person has
 * already seen.
 *
 * @example
 * ```ts
 * import { ShownText, type TextSink } from "./shown_text.ts";
 * let screen = "";
 * const sink: TextSink = { text: (d) => (screen += d), restart: () => (screen += "|") };
 * const shown = new ShownText(sink);
 * shown.text("Hello wor"); // the stream is cut here
 * shown.retry();
 * shown.text("Hello");
 * shown.text(" world.");
 * shown.finish();
 * console.assert(screen === "Hello world.");
 * ```
 */
export class ShownText {
  readonly #sink: TextSink;
  /** What is on the screen since the answer last (re)started, in characters. */
  #shown = "";
  /** The text of the current attempt so far. */
  #attempt = "";
  /** Whether the current attempt's text is printed as it comes (it is past what was shown). */
  #live = true;

  constructor(sink: TextSink) {
    this.#sink = sink;
  }

  /** A piece of the current attempt's text arrived. */
  text(delta: string): void {
    if (delta === "") return;
    this.#attempt += delta;
    if (this.#live) {
      this.#shown += delta;
      this.#sink.text(delta);
      return;
    }
    if (this.#shown.startsWith(this.#attempt)) return; // repeats what is shown: hold it
    this.#live = true;
    if (this.#attempt.startsWith(this.#shown)) {
      const rest = this.#attempt.slice(this.#shown.length);
      this.#shown = this.#attempt;
      this.#sink.text(rest);
    } else this.#startOver();
  }

  /** The current attempt failed and a new one begins. */
  retry(): void {
    this.#attempt = "";
    this.#live = this.#shown === "";
  }

  /** The current attempt finished: its text is the answer. */
  finish(): void {
    // An attempt that ended while still repeating must have said all that was shown.
    if (!this.#live && this.#attempt !== this.#shown) this.#startOver();
    this.#live = true;
  }

  #startOver(): void {
    this.#sink.restart();
    this.#shown = this.#attempt;
    if (this.#attempt !== "") this.#sink.text(this.#attempt);
  }
}
