/**
 * Markdown to terminal text, with `marked` and its terminal renderer `marked-terminal`
 * (code blocks highlighted by `cli-highlight`). Loaded late (lib/terminal/markdown.ts):
 * importing these costs about 0.4 s.
 *
 * @module
 */
import { Marked } from "marked";
import { markedTerminal } from "marked-terminal";

/** Renders one piece of markdown for a terminal `width` columns wide. */
export function makeRenderer(width: number): (source: string) => string {
  const marked = new Marked();
  // deno-lint-ignore no-explicit-any
  marked.use(markedTerminal({ width, reflowText: false, tab: 2 }) as any);
  return (source) => {
    try {
      return String(marked.parse(source, { async: false }));
    } catch {
      return source;
    }
  };
}
