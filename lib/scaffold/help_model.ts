/**
 * What `magi new` reads from a help text: options, positionals and what it left out.
 * Built by `help_parse.ts`; read by the schema generator.
 *
 * @module
 */

/** The value an option takes. */
export interface OptionValue {
  /** The name the help text gives the value, such as `FILE` or `<N>`. */
  metavar: string;
  type: "string" | "integer" | "number" | "boolean";
  /** The option may be given without a value (`--color[=WHEN]`). */
  optional: boolean;
  /** Whether the text wrote the value joined with `=` (`--width=COLS`). */
  equals: boolean;
  enum?: string[];
  /** The option takes two values, a name and a value (jq's `--arg name value`). */
  pairs?: boolean;
}

/** One option the help text lists. */
export interface HelpOption {
  /** Every spelling, as written: `["-l", "--long"]`. */
  names: string[];
  /** The spelling argv uses: the first long one, else the first. */
  flag: string;
  /** Absent for a flag that takes no value. */
  value?: OptionValue;
  /** The option may be given more than once (each value its own flag). */
  repeatable: boolean;
  /** One line, at most {@link MAX_DESCRIPTION} characters. */
  description: string;
  /** The default the text states, as written. */
  default?: string;
  /** The text says the option must be given (yargs' `[required]`). */
  required?: boolean;
}

/** One positional argument of the usage line. */
export interface HelpPositional {
  /** The name as written, without brackets: `FILE`, `jq filter`. */
  name: string;
  required: boolean;
  /** Several values may be given (`FILE...`). */
  repeated: boolean;
  description: string;
}

/** Something the parser saw and left out, and why. */
export interface Skipped {
  what: string;
  why: string;
  /** The option names concerned, where there are some. */
  names?: string[];
}

/** What a help text says about a program's command line. */
export interface HelpModel {
  /** The style the text looks like, for the report: "gnu", "argparse", "clap", …. */
  style: string;
  /** A one-line description of the program, when the text has one. */
  summary?: string;
  /** The first usage form, whitespace collapsed: `ls [OPTION]... [FILE]...`. */
  usage?: string;
  /** How many usage forms the text gives. */
  forms: number;
  options: HelpOption[];
  /** The first usage form's positionals; null when the usage line could not be read. */
  positionals: HelpPositional[] | null;
  /** Parts of the command line the model leaves to the generic `args` parameter. */
  skipped: Skipped[];
}
