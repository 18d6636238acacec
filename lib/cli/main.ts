/**
 * The command table and dispatch. Each command lives in its own file and takes its
 * arguments (after the command word); it returns the exit status.
 *
 * @module
 */
import { VERSION } from "../core/version.ts";
import { EXIT, isUsageError, warn, write } from "./common.ts";
import { lateImport } from "../core/lazy_require.ts";
import { sourceUrl } from "../core/source_root.ts";
import { COMMAND_SPECS, commandHelp } from "./options.ts";

type Command = (args: string[]) => Promise<number>;

/**
 * A command's module, imported by a URL known only at run time: with `import("./x.ts")`
 * Deno would read and parse every command's graph (the provider and MCP SDKs) before the
 * first line runs (lib/core/lazy_require.ts).
 */
const late = <T>(file: string) => lateImport<T>(sourceUrl(`lib/cli/${file.slice(2)}`));

/** Every command: name → how to load it. Its help is in options.ts, with its options. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  tools: async () => (await late<typeof import("./tools.ts")>("./tools.ts")).toolsCommand,
  call: async () => (await late<typeof import("./call.ts")>("./call.ts")).callCommand,
  builtin: async () => (await late<typeof import("./builtin.ts")>("./builtin.ts")).builtinCommand,
  mcp: async () => (await late<typeof import("./mcp.ts")>("./mcp.ts")).mcpCommand,
  check: async () => (await late<typeof import("./check.ts")>("./check.ts")).checkCommand,
  new: async () => (await late<typeof import("./new.ts")>("./new.ts")).newCommand,
  run: async () => (await late<typeof import("./run.ts")>("./run.ts")).runCommand,
  chat: async () => (await late<typeof import("./chat.ts")>("./chat.ts")).chatCommand,
  skills: async () => (await late<typeof import("./skills.ts")>("./skills.ts")).skillsCommand,
  context: async () => (await late<typeof import("./context.ts")>("./context.ts")).contextCommand,
  sessions: async () =>
    (await late<typeof import("./sessions.ts")>("./sessions.ts")).sessionsCommand,
  config: async () => (await late<typeof import("./config.ts")>("./config.ts")).configCommand,
  policy: async () => (await late<typeof import("./policy.ts")>("./policy.ts")).policyCommand,
};

function usage(): string {
  const rows = Object.keys(COMMANDS).map((name) => {
    const spec = COMMAND_SPECS[name];
    const head = `magi ${name}${spec.usage ? " " + spec.usage : ""}`;
    return `  ${head.padEnd(40)} ${spec.summary}`;
  });
  return `magi ${VERSION} — an agent runtime: one registry of tools, one pipeline for their results

Usage: magi COMMAND [options]    (magi COMMAND --help lists its options)

Commands:
${rows.join("\n")}

Options every command takes:
  --config FILE      read this config file last, over the user's and the project's (instead of $MAGI_CONFIG)
  --tools-dir DIR    add a tools folder (repeatable)
  --version, --help
`;
}

/**
 * An error nothing caught (a timer's, a stream's) ends magi as Deno would — status 1 — but
 * its text goes through the one writer, masked, instead of Deno's raw report.
 */
let reporting = false;
function reportUncaught(): void {
  if (reporting) return;
  reporting = true;
  const report = (error: unknown) => {
    const debug = Deno.env.get("MAGI_DEBUG") === "1" && error instanceof Error && error.stack;
    warn(`error: ${debug || (error instanceof Error ? error.message : String(error))}`);
    Deno.exit(1);
  };
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    report(event.error);
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    report(event.reason);
  });
}

/** Runs magi with its command-line arguments and returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  reportUncaught();
  try {
    return await dispatch(withOptionsAfterCommand(argv));
  } catch (error) {
    // A failure of magi itself (not of a tool: those are results) ends in one line; the
    // stack trace only when asked for with MAGI_DEBUG=1. Both are masked, like every line.
    const debug = Deno.env.get("MAGI_DEBUG") === "1" && error instanceof Error && error.stack;
    warn(`error: ${debug || (error instanceof Error ? error.message : String(error))}`);
    return 1;
  }
}

/** The options every command takes may come before the command: `magi --config F tools`. */
function withOptionsAfterCommand(args: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    if (a === "--config" || a === "--tools-dir") {
      leading.push(a, args[i + 1] ?? "");
      i += 2;
    } else if (a.startsWith("--config=") || a.startsWith("--tools-dir=")) {
      leading.push(a);
      i++;
    } else break;
  }
  if (leading.length === 0 || i >= args.length) return args;
  return [args[i], ...leading, ...args.slice(i + 1)];
}

async function dispatch(args: string[]): Promise<number> {
  const [first, ...rest] = args;
  if (first === "--version" || first === "-V") {
    await write(`magi ${VERSION}\n`);
    return EXIT.ok;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    await write(usage());
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
  // Options end at `--`: what follows is the command's own (a JSON argument, a task).
  const dashes = commandArgs.indexOf("--");
  const options = dashes < 0 ? commandArgs : commandArgs.slice(0, dashes);
  if (name !== "builtin" && (options.includes("--help") || options.includes("-h"))) {
    await write(commandHelp(name, COMMAND_SPECS[name]));
    return EXIT.ok;
  }
  if (name !== "builtin" && (options.includes("--version") || options.includes("-V"))) {
    await write(`magi ${VERSION}\n`);
    return EXIT.ok;
  }
  try {
    return await (await entry())(commandArgs);
  } catch (error) {
    if (isUsageError(error)) {
      warn(error.message);
      return EXIT.usage;
    }
    throw error;
  }
}
