/**
 * One output stream of a call, in the pipeline's order (SPEC S2.4): mask, then bound (to
 * each limit), then spill — so no kept text and no spill file holds a secret.
 *
 * @module
 */
import { Bounder } from "./bound.ts";
import { decodeByteString, looksBinary, toByteString, utf8ByteString } from "./bytes.ts";
import type { Masker, MaskStream } from "./mask.ts";
import { DEFAULT_SPILL_BYTES, Spill, spillCutNote } from "./spill.ts";

/** Bytes looked at to tell binary output from text. */
const BINARY_SAMPLE = 8192;

/** A stream that a transport writes into and the pipeline reads the kept texts from. */
export class Channel {
  readonly #mask: MaskStream;
  readonly #bounder: Bounder;
  readonly #spill: Spill;
  #sample = "";

  /**
   * @param limits the byte limits of the kept texts (said's, shown's), in the order `finish`
   *   returns them
   * @param spillDir where the whole output goes when any kept text is cut
   * @param label a short name for the spill file, such as the tool's name
   * @param spillBytes the cap of the spill file in bytes (config `limits.spill_bytes`)
   */
  constructor(
    masker: Masker,
    limits: number[],
    spillDir: string,
    label: string,
    spillBytes: number = DEFAULT_SPILL_BYTES,
  ) {
    this.#mask = masker.stream();
    this.#bounder = new Bounder(limits);
    this.#spill = new Spill(spillDir, label, Math.min(...limits), spillBytes);
  }

  /** Takes output: text (encoded as UTF-8) or bytes (which may be reused once this returns). */
  async push(chunk: Uint8Array | string): Promise<void> {
    const bytes = typeof chunk === "string" ? utf8ByteString(chunk) : toByteString(chunk);
    await this.#take(this.#mask.push(bytes));
  }

  async #take(masked: string): Promise<void> {
    if (masked.length === 0) return;
    if (this.#sample.length < BINARY_SAMPLE) {
      this.#sample += masked.slice(0, BINARY_SAMPLE - this.#sample.length);
    }
    this.#bounder.push(masked);
    await this.#spill.push(masked);
  }

  /**
   * Ends the stream.
   *
   * @returns the kept text for each limit (UTF-16 text; invalid UTF-8 as U+FFFD, binary
   *   output described), and the spill file's path or null
   */
  async finish(): Promise<{ texts: string[]; spill: string | null }> {
    await this.#take(this.#mask.end());
    const binary = looksBinary(this.#sample);
    const spill = await this.#spill.close(this.#bounder.cut || binary);
    const cut = this.#spill.cut;
    const cutNote = cut ? spillCutNote(cut) : undefined;
    const bounded = this.#bounder.finish(spill, cutNote);
    if (binary) {
      const where = spill === null
        ? ""
        : cutNote
        ? `; ${cutNote} in ${spill}`
        : `; the whole output is in ${spill}`;
      const text = `[magi: binary output, ${this.#bounder.totalBytes} bytes, not shown${where}]\n`;
      return { texts: bounded.map(() => text), spill };
    }
    return { texts: bounded.map((b) => decodeByteString(b.text)), spill };
  }
}
