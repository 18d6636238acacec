/**
 * The unix sockets bound in this network namespace, from the kernel's own list
 * (`/proc/net/unix`, see proc(5)): every listening or bound socket with a path, at any depth of
 * any folder. A folder walk finds only the sockets of the folders it looks in, down to its
 * depth; this list has them all, so the sandbox covers each whatever folder it lies in. (A
 * socket bound in another network namespace is not listed: the folder walk still looks for
 * those in /run, HOME and the temp folder. A socket bound by a relative path is listed by that
 * path, relative to a folder the list does not name: it is left out.) Bound is not listening,
 * and a path listed may have been removed since: the caller looks at each.
 *
 * @module
 */

import { SandboxSetupError } from "./sandbox_paths.ts";

/**
 * One record's fixed fields as the kernel prints them (`%pK: %08X %08X %08X %04X %02X %5lu`),
 * then a space and the path, raw: it may hold spaces, tabs and newlines (a newline carries it
 * on to the next lines).
 */
const RECORD =
  /^[0-9a-f]+: [0-9A-F]{8} [0-9A-F]{8} [0-9A-F]{8} [0-9A-F]{4} [0-9A-F]{2} +\d+(?: (.*))?$/;

/** The longest path a unix socket may be bound to (`sun_path` less its terminating NUL), bytes. */
const PATH_MAX = 107;

/**
 * The absolute paths of the bound unix sockets, read now; [] where `/proc/net/unix` cannot be
 * read (another OS). A path with a newline cannot be told from the records after it (a path may
 * end in text shaped like one): each record's path is given alone and joined with each run of
 * the lines that follow it, up to `sun_path`'s length, so whatever was meant is among them
 * (the caller keeps only what is a socket).
 *
 * @param text the file's text (tests); read from `/proc/net/unix` when absent
 * @throws SandboxSetupError when the list holds a path that is not UTF-8 (it could not be named)
 */
export function boundSockets(text?: string): string[] {
  let body = text;
  if (body === undefined) {
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync("/proc/net/unix");
    } catch {
      return [];
    }
    try {
      body = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new SandboxSetupError(
        "Cannot start the sandbox: a unix socket is bound to a path that is not UTF-8 " +
          "(/proc/net/unix); it could not be covered",
      );
    }
  }
  const lines = body.split("\n").slice(1);
  if (lines.at(-1) === "") lines.pop();
  const out = new Set<string>();
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  for (let i = 0; i < lines.length; i++) {
    const m = RECORD.exec(lines[i]);
    if (!m || m[1] === undefined) continue;
    // An abstract socket's path starts with "@" and has no file; a relative one names no folder.
    let path = m[1];
    if (!path.startsWith("/")) continue;
    out.add(path);
    for (let j = i + 1; j < lines.length; j++) {
      path += "\n" + lines[j];
      if (bytes(path) > PATH_MAX) break;
      out.add(path);
    }
  }
  return [...out];
}
