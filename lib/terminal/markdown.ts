/**
 * The model's answer rendered as markdown on a terminal, as it streams: text is held until
 * a block is whole (a blank line outside a fenced code block, or the answer's end), then the
 * block is rendered and written. The renderer (`marked` + `marked-terminal`,
 * lib/terminal/markdown_render.ts) is imported late, while the person types.
 *
 * Safety: the source is masked and made terminal-safe before it is rendered, so the only
 * escapes in what is written are the renderer's own styling.
 *
 * @module
 */
import { lateImport } from "../core/lazy_require.ts";
import { sourceUrl } from "../core/source_root.ts";

/** Renders one whole markdown block to terminal text. */
export type Render = (source: string) => string;

/** Loads the renderer for a terminal `width` columns wide. */
export async function loadRenderer(width: number): Promise<Render> {
  const mod = await lateImport<typeof import("./markdown_render.ts")>(
    sourceUrl("lib/terminal/markdown_render.ts"),
  );
  return mod.makeRenderer(width);
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/**
 * Splits streamed markdown into whole blocks.
 *
 * @example
 * ```ts
 * import { MarkdownBlocks } from "./markdown.ts";
 * const blocks = new MarkdownBlocks();
 * console.assert(blocks.push("# Hi\n\nsome").join("") === "# Hi\n");
 * console.assert(blocks.end() === "some");
 * ```
 */
export class MarkdownBlocks {
  #pending = "";
  #block = "";
  #fence: string | undefined;

  /** Takes a piece of text; returns the blocks it completed. */
  push(delta: string): string[] {
    this.#pending += delta;
    const done: string[] = [];
    let nl: number;
    while ((nl = this.#pending.indexOf("\n")) >= 0) {
      const line = this.#pending.slice(0, nl + 1);
      this.#pending = this.#pending.slice(nl + 1);
      const fence = FENCE.exec(line)?.[1];
      if (fence !== undefined) {
        if (this.#fence === undefined) this.#fence = fence[0];
        else if (fence[0] === this.#fence) this.#fence = undefined;
      }
      if (line.trim() === "" && this.#fence === undefined) {
        if (this.#block.trim() !== "") done.push(this.#block);
        this.#block = "";
      } else this.#block += line;
    }
    return done;
  }

  /** Whether nothing is held. */
  get empty(): boolean {
    return (this.#block + this.#pending).trim() === "";
  }

  /** The rest (the answer ended); the splitter is empty again. */
  end(): string {
    const rest = this.#block + this.#pending;
    this.reset();
    return rest.trim() === "" ? "" : rest;
  }

  /** Forgets what is held (the attempt was abandoned). */
  reset(): void {
    this.#pending = "";
    this.#block = "";
    this.#fence = undefined;
  }
}
