/**
 * `run`: a command line run by bash in its own process group (SPEC S5). stdout and stderr
 * reach said interleaved in arrival order; stdin is closed; the exit status is reported
 * when non-zero; on timeout the group is ended and the output so far returned with a note.
 * `cd` inside the command changes the session's working directory for later calls: an EXIT
 * trap writes bash's final working directory to a temp file, returned as the result's cwd —
 * only when the wrapper bash exited by itself (not by a signal, not timed out) and the file
 * starts with the call's nonce, which bash reads from stdin before the command runs (so it is
 * in no command line or environment a program of the call could read; see {@link wrapper}).
 * A program that reads or traces the wrapper's memory (`/proc/PPID/mem`, ptrace: the same user
 * may, in the sandbox too) can still learn it.
 *
 * @module
 */
import { scratchDir } from "../../confinement/sandbox.ts";
import { readSettled } from "../../exec/settled_file.ts";
import { isAbsolute, resolve } from "node:path";
import { processOutcome } from "../../exec/outcome.ts";
import { spawnProcess } from "../../exec/spawn.ts";
import { type Builtin, type BuiltinContext, type BuiltinResult, closedObject } from "./builtin.ts";
import { singleQuoted } from "../../core/quote.ts";

/** The `run` builtin. */
export const run: Builtin = {
  name: "run",
  description:
    "Run a bash command line; stdout+stderr interleaved, stdin closed; `cd` persists to later calls.\n" +
    "run <command> [--cwd DIR] [--timeout-seconds N]",
  parameters: closedObject(
    {
      command: { type: "string" },
      cwd: { type: "string", description: "Run there (cd persists only if the command does it)" },
      timeout_seconds: { type: "number", exclusiveMinimum: 0, description: "Default from config" },
    },
    ["command"],
    {
      argv: [
        { field: "command" },
        { flag: "--cwd", field: "cwd" },
        { flag: "--timeout-seconds", field: "timeout_seconds" },
      ],
      stdin: { mode: "none" },
    },
  ),
  run: (args, ctx) => runBuiltin(args, ctx),
};

async function runBuiltin(
  args: Record<string, unknown>,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  const command = String(args.command);
  let cwd = ctx.cwd;
  if (typeof args.cwd === "string" && args.cwd !== "") {
    cwd = isAbsolute(args.cwd) ? args.cwd : resolve(ctx.cwd, args.cwd);
    try {
      if (!(await Deno.stat(cwd)).isDirectory) {
        return {
          said: `Cannot run in "${args.cwd}": not a directory\n`,
          isError: true,
          code: "bad_arguments",
        };
      }
    } catch {
      return {
        said: `Cannot run in "${args.cwd}": no such directory\n`,
        isError: true,
        code: "bad_arguments",
      };
    }
  }
  const timeoutMs = typeof args.timeout_seconds === "number"
    ? args.timeout_seconds * 1000
    : ctx.timeoutMs;
  // In magi's scratch folder: writable inside the read-only sandbox too.
  const pwdFile = await Deno.makeTempFile({ dir: scratchDir(), prefix: "magi-pwd-" });
  const nonce = crypto.randomUUID();
  const script = wrapper(pwdFile, command);
  let bytes = 0;
  const said = (chunk: Uint8Array) => {
    bytes += chunk.length;
    return ctx.said(chunk);
  };
  try {
    // Inside the policy's sandbox when it is on (bwrap, then bash).
    const command = ctx.sandbox?.("bash", ["-c", script]) ??
      { program: "bash", args: ["-c", script] };
    const spawned = await spawnProcess({
      program: command.program,
      args: command.args,
      restart: command.restart,
      cwd,
      env: { ...ctx.env, PWD: cwd, MAGI_CWD: cwd },
      stdin: nonce + "\n",
      timeoutMs,
      signal: ctx.signal,
      onStdout: said,
      onStderr: said,
    });
    const outcome = processOutcome(spawned, timeoutMs);
    // Only the regular file magi made (a symlink planted there could name any file), written
    // by the wrapper's own EXIT trap: a program that wrote it and then killed the wrapper, or
    // one that could not learn the nonce, does not move the session.
    const exited = spawned.code !== null && spawned.signal === null && !spawned.timedOut &&
      !spawned.cancelled;
    const text = exited ? (await readSettled(pwdFile, 64 * 1024)) ?? "" : "";
    const final = text.startsWith(nonce + "\n")
      ? text.slice(nonce.length + 1).replace(/\n$/, "")
      : "";
    const moved = final !== "" && final !== cwd && isAbsolute(final) && isDirectory(final);
    return {
      said: bytes === 0 && !outcome.isError ? "(no output)\n" : "",
      isError: outcome.isError,
      code: outcome.code,
      note: outcome.note,
      ...(moved ? { cwd: final } : {}),
    };
  } finally {
    await Deno.remove(pwdFile).catch(() => {});
  }
}

/**
 * The wrapper script around a command line: bash reads the call's nonce from stdin into an
 * unexported variable (stdin is then `/dev/null`, as closed as before), so the nonce is in no
 * command line, environment or file a program of the call can read; the EXIT trap writes it,
 * then the final working folder, to `pwdFile`. Errors from bash itself and from the command
 * share stdout's pipe: one arrival order.
 */
function wrapper(pwdFile: string, command: string): string {
  const trap = `{ builtin printf '%s\\n' "$__magi_nonce"; builtin pwd; } >| ` +
    `${singleQuoted(pwdFile)} 2>/dev/null`;
  return `IFS= builtin read -r __magi_nonce\nexec </dev/null 2>&1\n` +
    `trap ${singleQuoted(trap)} EXIT\n` + command;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
