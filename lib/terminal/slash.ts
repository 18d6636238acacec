/**
 * Slash commands in `magi chat` (`/help`, `/model`, `/cost`…): an open table — chat adds its
 * own and others (MCP prompts) may join — with Tab completion of names and of arguments.
 *
 * @module
 */

/** What a command returns: `exit` leaves the chat; `{send}` sends that text as the person's message. */
export type SlashOutcome = void | "exit" | { send: string };

/** One slash command. */
export interface SlashCommand {
  /** Without the slash: `model`. */
  name: string;
  /** The argument's shape for /help: `[name]`, `ID`. */
  args?: string;
  help: string;
  /** Other names: `quit` for `exit`. */
  aliases?: string[];
  run(arg: string): SlashOutcome | Promise<SlashOutcome>;
  /** Completions of a partly typed argument. */
  complete?(partial: string): string[];
}

/** The table of slash commands. */
export class SlashTable {
  readonly #commands = new Map<string, SlashCommand>();

  /**
   * Adds (or replaces) a command.
   *
   * @throws Error when the name is not a word of letters, digits, `_`, `-`, `:` or `.`
   */
  add(command: SlashCommand): void {
    for (const name of [command.name, ...(command.aliases ?? [])]) {
      if (!/^[A-Za-z0-9_.:-]+$/.test(name)) {
        throw new Error(`Cannot add slash command "/${name}": its name must be one word`);
      }
      this.#commands.set(name, command);
    }
  }

  /** The commands, each once, in the order added. */
  list(): SlashCommand[] {
    return [...new Set(this.#commands.values())];
  }

  /** Whether a line is a slash command (`/x`, but not `//x` or a path like `/tmp/a`). */
  static isCommand(line: string): boolean {
    return /^\/[A-Za-z0-9_.:-]+(\s|$)/.test(line.trim());
  }

  /**
   * Runs a line that {@link isCommand}.
   *
   * @returns the outcome, or a message when no such command exists
   */
  async run(line: string): Promise<{ outcome: SlashOutcome } | { unknown: string }> {
    const trimmed = line.trim();
    const space = trimmed.search(/\s/);
    const name = (space < 0 ? trimmed : trimmed.slice(0, space)).slice(1);
    const arg = space < 0 ? "" : trimmed.slice(space + 1).trim();
    const command = this.#commands.get(name);
    if (!command) {
      return { unknown: `magi: no command /${name}; /help lists them` };
    }
    return { outcome: await command.run(arg) };
  }

  /** The /help text: one line per command. */
  help(): string {
    const rows = this.list().map((c) => {
      const head = `/${c.name}${c.args ? " " + c.args : ""}`;
      return `  ${head.padEnd(18)} ${c.help}`;
    });
    return `Commands:\n${rows.join("\n")}\n`;
  }

  /** A readline completer: `[matches, the part they complete]`. */
  complete(line: string): [string[], string] {
    if (!line.startsWith("/")) return [[], line];
    const space = line.indexOf(" ");
    if (space < 0) {
      const names = [...this.#commands.keys()].map((n) => `/${n}`).filter((n) =>
        n.startsWith(line)
      );
      return [names.map((n) => n + " "), line];
    }
    const command = this.#commands.get(line.slice(1, space));
    const partial = line.slice(space + 1);
    const options = command?.complete?.(partial).filter((o) => o.startsWith(partial)) ?? [];
    return [options, partial];
  }
}

/** Adds commands to a chat's table when it starts (MCP prompts, a feature's own command). */
export type SlashSource = (table: SlashTable) => void;

const sources: SlashSource[] = [];

/**
 * Registers a source of slash commands: each `magi chat` calls it once its own commands are
 * in, so a source may add more or replace one (the context work's `/compact`).
 */
export function addSlashSource(source: SlashSource): void {
  sources.push(source);
}

/** Lets every registered source add its commands to `table`. */
export function applySlashSources(table: SlashTable): void {
  for (const source of sources) source(table);
}
