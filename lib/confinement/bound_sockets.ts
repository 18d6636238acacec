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

/**
 * The absolute paths of the bound unix sockets, read now; [] where `/proc/net/unix` cannot be
 * read (another OS).
 *
 * @param text the file's text (tests); read from `/proc/net/unix` when absent
 */
export function boundSockets(text?: string): string[] {
  let body = text;
  if (body === undefined) {
    try {
      body = Deno.readTextFileSync("/proc/net/unix");
    } catch {
      return [];
    }
  }
  const out = new Set<string>();
  for (const line of body.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is the 8th field, and may hold
    // spaces; an abstract socket's starts with "@" and has no file.
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const path = fields.slice(7).join(" ");
    if (path.startsWith("/")) out.add(path);
  }
  return [...out];
}
