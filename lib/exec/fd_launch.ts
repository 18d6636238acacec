/**
 * Starting a program with a file open on a descriptor past stdio, which `Deno.Command` cannot
 * give a child: `/bin/sh` opens the file, then `exec`s the program (same process, same
 * status). bwrap's `--seccomp FD` is the use (see `lib/confinement/seccomp.ts`).
 *
 * @module
 */

/** The shell line: `$0` is the program, `$@` its arguments; FILE is quoted in. */
const LINE = (fd: number, quoted: string) => `exec "$0" "$@" ${fd}<${quoted}`;

/**
 * The command that starts `command` with `file` open for reading on descriptor `fd` (3–9).
 *
 * @throws RangeError for a descriptor outside 3–9 (one digit: the shell's redirection)
 */
export function withDescriptor(
  command: { program: string; args: string[] },
  fd: number,
  file: string,
): { program: string; args: string[] } {
  if (!Number.isInteger(fd) || fd < 3 || fd > 9) throw new RangeError(`descriptor ${fd}`);
  const quoted = "'" + file.replaceAll("'", "'\\''") + "'";
  return { program: "/bin/sh", args: ["-c", LINE(fd, quoted), command.program, ...command.args] };
}

/** The program a command really runs: the one {@link withDescriptor} started, or itself. */
export function launchedProgram(program: string, args: readonly string[] = []): string {
  const wrapped = program === "/bin/sh" && args[0] === "-c" && /^exec "\$0" "\$@" \d</.test(
    args[1] ?? "",
  );
  return wrapped && args[2] !== undefined ? args[2] : program;
}
