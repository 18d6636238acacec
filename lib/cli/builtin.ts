/**
 * `magi builtin NAME ARGS…` and `magi builtin NAME --help`: a builtin called from a shell
 * line. The arguments are parsed with the builtin's own `x-magi` mapping in reverse (stdin
 * gives `write` its content and `edit` its JSON), and the call goes through the pipeline like
 * any other; shown is printed, and the exit status is 1 when the result is an error. The
 * caller is the one of the call whose program runs it (see `lib/policy/caller.ts`).
 *
 * @module
 */
import { BUILTINS } from "../sources/builtins/mod.ts";
import { runTool } from "../runtime/run_tool.ts";
import { callerOf } from "../policy/caller.ts";
import { readMapping } from "../sources/argv.ts";
import { ArgvError, parseArgv } from "../sources/argv_parse.ts";
import { EXIT, runtimeFor, UsageError, write } from "./common.ts";

async function readStdin(): Promise<string | undefined> {
  if (Deno.stdin.isTerminal()) return undefined;
  return await new Response(Deno.stdin.readable).text();
}

/** Runs `magi builtin`. */
export async function builtinCommand(argv: string[]): Promise<number> {
  const common: { config?: string; "tools-dir"?: string[] } = {};
  let i = 0;
  for (; i < argv.length; i++) {
    if (argv[i] === "--config" && i + 1 < argv.length) common.config = argv[++i];
    else if (argv[i] === "--tools-dir" && i + 1 < argv.length) {
      (common["tools-dir"] ??= []).push(argv[++i]);
    } else break;
  }
  const [name, ...rest] = argv.slice(i);
  const names = BUILTINS.map((b) => b.name).join(", ");
  if (!name || name === "--help" || name === "-h") {
    await write(
      `Usage: magi builtin NAME [ARGS…] | magi builtin NAME --help\nBuiltins: ${names}\n`,
    );
    return name ? EXIT.ok : EXIT.usage;
  }
  const builtin = BUILTINS.find((b) => b.name === name);
  if (!builtin) throw new UsageError(`unknown builtin "${name}" (builtins: ${names})`);
  if (rest.length === 1 && (rest[0] === "--help" || rest[0] === "-h")) {
    await write(builtin.description + "\n");
    return EXIT.ok;
  }
  const mapping = readMapping(builtin.parameters);
  if (typeof mapping === "string") throw new Error(`builtin "${name}": ${mapping}`);
  const wantsStdin = mapping.stdin.mode !== "none";
  let args: Record<string, unknown>;
  try {
    args = parseArgv(mapping, builtin.parameters, rest, wantsStdin ? await readStdin() : undefined);
  } catch (error) {
    if (error instanceof ArgvError) {
      const usage = builtin.description.split("\n")[1] ?? "";
      throw new UsageError(`${name}: ${error.message}; usage: ${usage}`);
    }
    throw error;
  }
  const rt = await runtimeFor(common);
  // The caller of the call whose program runs this one (`caller.ts`): a model's tool or `run`
  // line makes a model's call here too, judged and asked about as the model's own.
  const result = await runTool(rt, { name, args, caller: callerOf(Deno.env.toObject()) });
  if (result.shown !== "") {
    await write(result.shown.endsWith("\n") ? result.shown : result.shown + "\n");
  }
  return result.is_error ? EXIT.toolError : EXIT.ok;
}
