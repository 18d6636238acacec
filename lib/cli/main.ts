/**
 * The command table and dispatch. Each command lives in its own file and takes its
 * arguments (after the command word); it returns the exit status.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { builtinCommand } from "./builtin.ts";
import { callCommand } from "./call.ts";
import { checkCommand } from "./check.ts";
import { EXIT, isUsageError, warn, write } from "./common.ts";
import { configCommand } from "./config.ts";
import { chatCommand } from "./chat.ts";
import { runCommand } from "./run.ts";
import { sessionsCommand } from "./sessions.ts";
import { mcpCommand } from "./mcp.ts";
import { newCommand } from "./new.ts";
import { toolsCommand } from "./tools.ts";

type Command = (args: string[]) => Promise<number>;

/** Every command: name → [run, one-line help]. */
const COMMANDS: Record<string, [Command, string]> = {
  tools: [toolsCommand, "tools [--json]                 list the tools the model sees"],
  call: [callCommand, "call NAME [JSON|-] [--json]    call one tool through the pipeline"],
  builtin: [builtinCommand, "builtin NAME [ARGS…|--help]    call a builtin from a shell line"],
  mcp: [mcpCommand, "mcp [--http [--port N]]        serve the tools over MCP (stdio or HTTP)"],
  check: [checkCommand, "check                          run every tool's selftest.sh"],
  new: [newCommand, "new NAME --from PROGRAM [--dry-run] [--generic] [--force]  make a tool"],
  run: [runCommand, 'run "TASK" [--provider P] [--model M] [--json] [--resume ID]  one task'],
  chat: [chatCommand, "chat [--provider P] [--model M] [--resume ID]  an interactive session"],
  sessions: [sessionsCommand, "sessions [--json]              list the sessions"],
  config: [
    configCommand,
    "config [--json]                print the effective config and its origins",
  ],
};

const USAGE =
  `magi ${VERSION} — an agent runtime: one registry of tools, one pipeline for their results

Usage: magi COMMAND [options]

Commands:
${Object.values(COMMANDS).map(([, help]) => `  magi ${help}`).join("\n")}

Options every command takes:
  --config FILE      use this config file (also MAGI_CONFIG)
  --tools-dir DIR    add a tools folder (repeatable)
  --version, --help
`;

/** Runs magi with its command-line arguments and returns the exit status. */
export async function main(args: string[]): Promise<number> {
  const [first, ...rest] = args;
  if (first === "--version" || first === "-V") {
    await write(`magi ${VERSION}\n`);
    return EXIT.ok;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    await write(USAGE);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  let name = first;
  let commandArgs = rest;
  if (first === "tools" && rest.includes("--selftest")) {
    name = "check";
    commandArgs = rest.filter((a) => a !== "--selftest");
  }
  const entry = COMMANDS[name];
  if (!entry) {
    warn(`unknown command "${first}"; \`magi --help\` lists the commands`);
    return EXIT.usage;
  }
  if (name !== "builtin" && (commandArgs.includes("--help") || commandArgs.includes("-h"))) {
    await write(`Usage: magi ${entry[1]}\n`);
    return EXIT.ok;
  }
  try {
    return await entry[0](commandArgs);
  } catch (error) {
    if (isUsageError(error)) {
      warn(error.message);
      return EXIT.usage;
    }
    throw error;
  }
}
