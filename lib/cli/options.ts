/**
 * Every command's options in one table: the parser reads it (`parseCommand`) and so does
 * `magi COMMAND --help`, so the help lists every option there is, with an example.
 *
 * @module
 */

/** One option: `parseArgs`'s fields and what `--help` says. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** The value's name in help: `N`, `TEXT`. */
  arg?: string;
  help: string;
}

/** One command's help and options. */
export interface CommandSpec {
  /** The words after `magi NAME`: `NAME [JSON|-]`. */
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Each a command line; a line after a newline says what it does. */
  examples: string[];
}

const sandbox = {
  type: "string",
  arg: "MODE",
  help: "read-only, workspace-write or off (the sandbox programs run in)",
} as const;
const json = { type: "boolean", help: "print JSON instead of text" } as const;

const agent = {
  provider: { type: "string", arg: "NAME", help: "the provider (config providers.NAME)" },
  model: { type: "string", arg: "NAME", help: "the model, instead of the provider's own" },
  resume: { type: "string", arg: "ID", help: "go on with a session (an id, its prefix, or last)" },
  "max-turns": { type: "string", arg: "N", help: "the most model requests (default 50)" },
  sandbox,
} as const;

export const TOOLS_OPTIONS = { json } as const;
export const CALL_OPTIONS = {
  json,
  answer: {
    type: "string",
    multiple: true,
    arg: "TEXT",
    help: "answer the tool's next question (in order)",
  },
  "as-model": { type: "boolean", help: "judge the call as a model's: ask is a denial" },
  sandbox,
} as const;
export const MCP_OPTIONS = {
  http: { type: "boolean", help: "serve Streamable HTTP on loopback instead of stdio" },
  port: { type: "string", arg: "N", help: "the HTTP port (with --http)" },
  "no-auth": { type: "boolean", help: "serve HTTP without the bearer token" },
  "token-file": { type: "string", arg: "FILE", help: "where the HTTP bearer token is kept" },
  sandbox,
} as const;
export const NEW_OPTIONS = {
  from: {
    type: "string",
    arg: "PROGRAM",
    help: "the program, with its subcommand if any: --from 'git commit'",
  },
  "max-params": {
    type: "string",
    arg: "N",
    help: "type at most N parameters, over the 4 KB budget if need be",
  },
  only: {
    type: "string",
    multiple: true,
    arg: "A,B",
    help: "type just these options, by any spelling (-c, --create, create)",
  },
  "dry-run": { type: "boolean", help: "print the files it would write, and write nothing" },
  generic: { type: "boolean", help: "no schema: the tool takes args and stdin as they are" },
  force: { type: "boolean", help: "replace a tool of that name" },
} as const;
export const RUN_OPTIONS = {
  ...agent,
  json: { type: "boolean", help: "one JSON event per line on stdout" },
  answer: {
    type: "string",
    multiple: true,
    arg: "TEXT",
    help: "answer a tool's next question (in order)",
  },
  auto: { type: "boolean", help: "act without asking, inside the workspace-write sandbox" },
} as const;
export const CHAT_OPTIONS = { ...agent } as const;
export const SESSIONS_OPTIONS = { json } as const;
export const CONFIG_OPTIONS = { json } as const;
export const SKILLS_OPTIONS = { json } as const;
export const CONTEXT_OPTIONS = { json } as const;
export const POLICY_OPTIONS = {
  json,
  cwd: { type: "string", arg: "DIR", help: "judge the call as if run in this folder" },
} as const;

/** Every command's help, by name (`builtin` prints its own). */
export const COMMAND_SPECS: Record<string, CommandSpec> = {
  tools: {
    usage: "",
    summary: "list the tools the model sees",
    options: TOOLS_OPTIONS,
    examples: ["magi tools", "magi tools --json | jq '.[].name'"],
  },
  call: {
    usage: "NAME [JSON|-]",
    summary: "call one tool through the pipeline, as the person",
    options: CALL_OPTIONS,
    examples: [`magi call read '{"path": "README.md"}'`, "magi call ask-me '{}' --answer yes"],
  },
  builtin: {
    usage: "NAME [ARGS…|--help]",
    summary: "call a builtin from a shell line",
    options: {},
    examples: ["magi builtin read README.md"],
  },
  mcp: {
    usage: "[login NAME]",
    summary: "serve the tools over MCP (stdio, or Streamable HTTP with a token); " +
      "`login NAME` signs in to a remote MCP server with OAuth and keeps its tokens (0600)",
    options: MCP_OPTIONS,
    examples: ["magi mcp", "magi mcp --http --port 8765", "magi mcp login linear"],
  },
  check: {
    usage: "",
    summary: "run every tool's selftest.sh",
    options: {},
    examples: ["magi check"],
  },
  new: {
    usage: "NAME --from PROGRAM",
    summary: "Makes a tool from a program: tools_dir/NAME/ with NAME (a symlink to the program, " +
      "or a wrapper script), schema.json (the typed parameters the model sees) and selftest.sh. " +
      "It reads the program's --help, the fuller help the text points to (--help all) and its " +
      "manual page (man -P cat: SYNOPSIS, options, EXAMPLES), and types the options people use " +
      "within a 4 KB declaration; the rest stay reachable through the args parameter. " +
      "Afterwards: magi check runs each selftest.sh, which calls the program through the tool " +
      "harmlessly (--version, a dry run or an empty expression).",
    options: NEW_OPTIONS,
    examples: [
      "magi new find --from find --tools-dir ~/.config/magi/tools\n" +
      "paths, then find's predicates (-name, -type, -maxdepth), then an expression of words",
      "magi new commit --from 'git commit' --dry-run\nsee the schema and selftest without writing them",
      "magi new tar --from tar --only c,x,t,f,z,C,exclude\ntype just the options named",
      "magi new fetch --from curl --max-params 80\n" +
      "type more of curl's 250 options (the declaration may pass 4 KB)",
      "magi new notes --from ./notes.py --generic\na tool that passes its arguments through untyped",
    ],
  },
  run: {
    usage: '"TASK" | -',
    summary: "one task, non-interactive; the exit status tells how it ended",
    options: RUN_OPTIONS,
    examples: [
      'magi run "fix the failing test" --provider ollama',
      "magi run --resume last 'go on'",
    ],
  },
  chat: {
    usage: "",
    summary: "a conversation at a prompt (/help lists its commands)",
    options: CHAT_OPTIONS,
    examples: ["magi chat --provider anthropic", "magi chat --resume last"],
  },
  skills: {
    usage: "",
    summary: "list the skills the model can load (name, description, where)",
    options: SKILLS_OPTIONS,
    examples: ["magi skills", "magi skills --json"],
  },
  context: {
    usage: "",
    summary: "print the system prompt and tool declarations the model is given, in bytes",
    options: CONTEXT_OPTIONS,
    examples: ["magi context", "magi context --json | jq .bytes"],
  },
  sessions: {
    usage: "[list | show ID | fork ID]",
    summary: "list the sessions, show one's conversation, or fork one into a new session",
    options: SESSIONS_OPTIONS,
    examples: ["magi sessions", "magi sessions show last", "magi sessions fork 20261201-1300"],
  },
  config: {
    usage: "",
    summary: "print the effective config and where each value came from",
    options: CONFIG_OPTIONS,
    examples: ["magi config", "magi config --json"],
  },
  policy: {
    usage: "explain TOOL [JSON]",
    summary: "the policy's decision on a call, and the rule that made it",
    options: POLICY_OPTIONS,
    examples: [`magi policy explain run '{"command": "git push"}'`],
  },
};

/** The options every command takes, for help. */
export const COMMON_HELP: Record<string, OptionSpec> = {
  config: {
    type: "string",
    arg: "FILE",
    help: "read this config file last, over the user's and the project's",
  },
  "tools-dir": { type: "string", multiple: true, arg: "DIR", help: "add a tools folder" },
  help: { type: "boolean", short: "h", help: "print this help" },
  version: { type: "boolean", short: "V", help: "print magi's version" },
};

function optionRows(options: Record<string, OptionSpec>): string[] {
  const heads = Object.entries(options).map(([name, o]) =>
    `${o.short ? `-${o.short}, ` : ""}--${name}${o.arg ? " " + o.arg : ""}`
  );
  const width = Math.max(0, ...heads.map((h) => h.length)) + 2;
  return Object.values(options).map((o, i) =>
    `  ${heads[i].padEnd(width)}${o.help}${o.multiple ? " (repeatable)" : ""}`
  );
}

/** `magi NAME --help`. */
export function commandHelp(name: string, spec: CommandSpec): string {
  const lines = [`Usage: magi ${name}${spec.usage ? " " + spec.usage : ""} [options]`, ""];
  lines.push(...wrap(spec.summary, 96), "");
  if (Object.keys(spec.options).length > 0) lines.push("Options:", ...optionRows(spec.options), "");
  lines.push("Options every command takes:", ...optionRows(COMMON_HELP), "");
  lines.push(spec.examples.length > 1 ? "Examples:" : "Example:");
  lines.push(...spec.examples.map((e) => `  ${e.replaceAll("\n", "\n      ")}`), "");
  return lines.join("\n");
}

/** `text` in lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return line === "" ? lines : [...lines, line];
}

/** The option names of a table, without help, for `parseArgs`. */
export function parserOptions(
  options: Record<string, OptionSpec>,
): Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }> {
  return Object.fromEntries(
    Object.entries(options).map(([name, o]) => [
      name,
      {
        type: o.type,
        ...(o.multiple ? { multiple: true } : {}),
        ...(o.short ? { short: o.short } : {}),
      },
    ]),
  );
}
