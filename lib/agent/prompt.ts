/**
 * The system prompt: who the model works for, where it stands (working directory, date),
 * and the project's `AGENTS.md` — the convention Codex, opencode and others share — cut to
 * a bounded size.
 *
 * @module
 */
import { dirname, join } from "node:path";

/** The most of `AGENTS.md` the prompt carries, in bytes. */
export const AGENTS_MD_MAX_BYTES = 32 * 1024;

/** Where the prompt is built for. */
export interface PromptContext {
  cwd: string;
  env: Record<string, string>;
  now: Date;
}

/**
 * Finds the `AGENTS.md` nearest to `cwd`: in `cwd` or a folder above it, stopping at the
 * repository root (the folder holding `.git`). Returns its path, or undefined.
 */
export function findAgentsMd(cwd: string): string | undefined {
  for (let dir = cwd;; dir = dirname(dir)) {
    const candidate = join(dir, "AGENTS.md");
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch { /* not here */ }
    let atRoot = false;
    try {
      atRoot = Deno.statSync(join(dir, ".git")) !== undefined;
    } catch { /* no .git */ }
    if (atRoot || dirname(dir) === dir) return undefined;
  }
}

/** Reads at most `maxBytes` bytes of a text file, cut at a character boundary, with a note. */
function readBounded(path: string, maxBytes: number): string {
  const bytes = Deno.readFileSync(path);
  if (bytes.length <= maxBytes) return new TextDecoder().decode(bytes);
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  const kept = new TextDecoder().decode(bytes.subarray(0, end));
  return `${kept}\n[magi: AGENTS.md cut at ${end} of ${bytes.length} bytes]`;
}

/** Builds the system prompt. */
export function systemPrompt(ctx: PromptContext): string {
  const who = ctx.env.USER || ctx.env.LOGNAME || "the person who started you";
  const lines = [
    `You are magi, an agent running in a terminal, working for ${who}.`,
    "You act through the tools you are given; prefer using a tool over guessing. " +
    "Tool results are bounded: when output was cut, a note names the file that holds all of it.",
    "When the task is done, answer briefly with what you did and what you found.",
    "",
    `Working directory: ${ctx.cwd}`,
    `Date: ${ctx.now.toISOString().slice(0, 10)}`,
  ];
  const agents = findAgentsMd(ctx.cwd);
  if (agents) {
    let text: string;
    try {
      text = readBounded(agents, AGENTS_MD_MAX_BYTES);
    } catch {
      text = "";
    }
    if (text.trim() !== "") {
      lines.push("", `The project's instructions (${agents}):`, "", text.trimEnd());
    }
  }
  return lines.join("\n") + "\n";
}
