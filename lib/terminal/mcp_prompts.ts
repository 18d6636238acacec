/**
 * MCP prompts as chat slash commands (SPEC S9; as Claude Code offers them):
 * `/mcp__SERVER__NAME ARG…` fetches the server's prompt with the words as its arguments, in
 * the order the server lists them (the last takes the rest of the line), and sends the prompt's
 * text as the person's message.
 *
 * @module
 */
import { getMcpPrompt } from "../sources/mcp/client.ts";
import type { McpPrompt } from "../sources/mcp/catalog.ts";
import type { SlashTable } from "./slash.ts";

/** The words of `arg` given to the prompt's arguments in order; the last takes the rest. */
export function promptArguments(prompt: McpPrompt, arg: string): Record<string, string> {
  const words = arg.split(/\s+/).filter((w) => w !== "");
  const out: Record<string, string> = {};
  prompt.arguments.forEach((a, i) => {
    const last = i === prompt.arguments.length - 1;
    const value = last ? words.slice(i).join(" ") : words[i];
    if (value) out[a.name] = value;
  });
  return out;
}

/** Adds `/mcp__SERVER__NAME` for one prompt; a failure to fetch it is one line. */
export function addMcpPrompt(
  table: SlashTable,
  prompt: McpPrompt,
  out: (text: string) => void,
): void {
  const name = `mcp__${prompt.server}__${prompt.name}`.replace(/[^A-Za-z0-9_.:-]/g, "_");
  const args = prompt.arguments.map((a) => a.required ? a.name.toUpperCase() : `[${a.name}]`);
  table.add({
    name,
    ...(args.length ? { args: args.join(" ") } : {}),
    help: (prompt.title ?? prompt.description ?? `the prompt ${prompt.name} of ${prompt.server}`)
      .split("\n")[0].slice(0, 80),
    run: async (arg) => {
      const given = promptArguments(prompt, arg);
      const missing = prompt.arguments.filter((a) => a.required && !given[a.name]);
      if (missing.length > 0) {
        out(`magi: /${name} needs ${missing.map((a) => a.name.toUpperCase()).join(" ")}\n`);
        return undefined;
      }
      try {
        return { send: await getMcpPrompt(prompt.server, prompt.name, given) };
      } catch (error) {
        out(`magi: /${name}: ${(error as Error).message}\n`);
        return undefined;
      }
    },
  });
}
