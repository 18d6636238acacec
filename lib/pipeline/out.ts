/**
 * The one way magi writes to stdout and stderr. Every write is masked with the process's
 * masker (SPEC S2.3) — the model's text, tool-call arguments, `shown`, notes, warnings,
 * error lines, questions, Lua `print`, `--json` events — and, when the destination is a
 * terminal, text from outside magi has its control characters shown visibly
 * (`terminal_safe.ts`); only magi's own styling, written with {@link Output.own}, keeps its
 * escapes. Text that arrives in pieces (a model's token deltas) goes through
 * {@link Output.stream}, which holds back enough of the end to catch a secret split between
 * two pieces.
 *
 * The channels that leave magi are listed, with how each is provoked, in
 * `tests/output/channels_test.ts`; a new channel joins that table.
 *
 * @module
 */
import { apiKeyEnvNames } from "../config/providers.ts";
import { fromByteString, utf8ByteString } from "./bytes.ts";
import { collectSecrets, Masker, type MaskStream } from "./mask.ts";
import { terminalSafe, terminalSafeJson } from "../core/terminal_safe.ts";

/** A file written to: `Deno.stdout`, `Deno.stderr`. */
export interface OutFile {
  writeSync(p: Uint8Array): number;
  isTerminal(): boolean;
}

/** Where text goes when not a file (tests, a buffer): receives the masked text. */
export type Sink = (text: string) => void;

/** The masker before a runtime exists: credential variables and the presets' key names. */
function earlyMasker(): Masker {
  try {
    const env = Deno.env.toObject();
    return new Masker(collectSecrets(env, apiKeyEnvNames(undefined)).secrets);
  } catch {
    return new Masker([]);
  }
}

let processMasker: Masker | undefined;

/** The masker every write uses (the runtime's, once one is built). */
export function outputMasker(): Masker {
  return processMasker ??= earlyMasker();
}

/** Makes `masker` the one every later write uses (`createRuntime` calls this). */
export function useMasker(masker: Masker): void {
  processMasker = masker;
}

const encoder = new TextEncoder();

/** How an {@link Output} is made. */
export interface OutputOptions {
  /** Whether the destination is a terminal; default: the file's `isTerminal()`. */
  terminal?: boolean;
  /** The masker; default: {@link outputMasker} at each write. */
  masker?: Masker;
}

/** A writer to one destination. A reader that went away (`| head`) ends it quietly. */
export class Output {
  readonly #write: (bytes: Uint8Array, text: string) => void;
  readonly #masker: Masker | undefined;
  /** Whether the destination is a terminal (foreign text is made terminal-safe). */
  readonly terminal: boolean;
  #gone = false;

  private constructor(
    write: (bytes: Uint8Array, text: string) => void,
    terminal: boolean,
    masker?: Masker,
  ) {
    this.#write = write;
    this.terminal = terminal;
    this.#masker = masker;
  }

  /** A writer to a file such as `Deno.stdout`. */
  static file(file: OutFile, options: OutputOptions = {}): Output {
    let terminal = options.terminal;
    if (terminal === undefined) {
      try {
        terminal = file.isTerminal();
      } catch {
        terminal = false;
      }
    }
    return new Output(
      (bytes) => {
        let at = 0;
        while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
      },
      terminal,
      options.masker,
    );
  }

  /** A writer to a function (it receives masked, and if `terminal` made safe, text). */
  static sink(sink: Sink, options: OutputOptions = {}): Output {
    return new Output((_bytes, text) => sink(text), options.terminal ?? false, options.masker);
  }

  get #m(): Masker {
    return this.#masker ?? outputMasker();
  }

  #emit(text: string): void {
    if (this.#gone || text === "") return;
    try {
      this.#write(encoder.encode(text), text);
    } catch (error) {
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      this.#gone = true;
    }
  }

  /**
   * The masked form of `text`, for a caller that must shorten or reflow it before writing:
   * mask first, so a cut never leaves part of a secret that masking would no longer find.
   */
  mask(text: string): string {
    return this.#m.maskText(text);
  }

  /** Writes text from outside magi, or text that holds some: masked and terminal-safe. */
  text(text: string): void {
    const masked = this.#m.maskText(text);
    this.#emit(this.terminal ? terminalSafe(masked) : masked);
  }

  /**
   * Writes magi's own text, escapes included (styling, the progress line). Masked too; it
   * must not hold text from outside magi — write that with {@link text} between.
   */
  own(text: string): void {
    this.#emit(this.#m.maskText(text));
  }

  /** Writes one JSON value and a line feed: masked, and safe on a terminal (`\u009b`…). */
  json(value: unknown, space?: number): void {
    this.#emit(this.#m.maskText(terminalSafeJson(value, space)) + "\n");
  }

  /** Starts a text stream that arrives in pieces; see {@link OutputStream}. */
  stream(): OutputStream {
    return new OutputStream(this.#m.stream(), (text) => this.#emit(text), this.terminal);
  }
}

/**
 * Text in pieces (a model's deltas), masked as one stream: the masker holds back the end
 * (as many bytes as the longest form of a secret can span, twice) until more comes or
 * {@link end} is called, so a secret split between two pieces is still caught.
 */
export class OutputStream {
  readonly #mask: MaskStream;
  readonly #emit: (text: string) => void;
  readonly #terminal: boolean;
  #decoder = new TextDecoder();
  #cr = "";

  constructor(mask: MaskStream, emit: (text: string) => void, terminal: boolean) {
    this.#mask = mask;
    this.#emit = emit;
    this.#terminal = terminal;
  }

  /** Takes the next piece; writes what is safe to write now. */
  push(piece: string): void {
    this.#out(this.#mask.push(utf8ByteString(piece)), false);
  }

  /** Writes what was held back. The stream can be used again afterwards. */
  end(): void {
    this.#out(this.#mask.end(), true);
  }

  #out(bytes: string, last: boolean): void {
    let text = this.#decoder.decode(fromByteString(bytes), { stream: !last });
    if (!this.#terminal) return this.#emit(text);
    // A carriage return at a piece's end waits: before a line feed it is a line end.
    text = this.#cr + text;
    this.#cr = "";
    if (!last && text.endsWith("\r")) {
      this.#cr = "\r";
      text = text.slice(0, -1);
    }
    this.#emit(terminalSafe(text));
  }
}

/** magi's stdout. */
export const stdout: Output = Output.file(Deno.stdout);
/** magi's stderr. */
export const stderr: Output = Output.file(Deno.stderr);
