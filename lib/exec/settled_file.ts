/**
 * Files a tool hands back to magi (`$MAGI_SHOWN`, `$MAGI_ASK`, `run`'s last working folder),
 * opened only as the regular files they should be. A sandboxed tool may write these, so it
 * could swap one for a symlink to a file it cannot read itself (a credential store the
 * sandbox hides); magi, reading outside the sandbox, would follow it. They are read after the
 * tool's processes have ended — in the sandbox's PID namespace none outlives it — so a check
 * of the name and then of the opened file cannot be raced.
 *
 * @module
 */

/**
 * Opens a file a tool wrote, refusing anything but a regular file with one link: not a
 * symlink, FIFO or device, not a hard link to another file.
 *
 * @returns the open file, or undefined when it is missing, empty or not such a file
 */
export async function openSettled(path: string): Promise<Deno.FsFile | undefined> {
  let named: Deno.FileInfo;
  try {
    named = await Deno.lstat(path);
  } catch {
    return undefined;
  }
  if (!named.isFile || named.isSymlink || named.size === 0 || (named.nlink ?? 1) > 1) {
    return undefined;
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch {
    return undefined;
  }
  const opened = await file.stat().catch(() => undefined);
  if (!opened || !opened.isFile || opened.ino !== named.ino || opened.dev !== named.dev) {
    file.close();
    return undefined;
  }
  return file;
}

/**
 * Reads a file a tool wrote (see {@link openSettled}) as text, up to `maxBytes`.
 *
 * @returns the text, or undefined when it is missing, empty, larger than `maxBytes` or not a
 *   regular file of its own
 */
export async function readSettled(path: string, maxBytes: number): Promise<string | undefined> {
  const file = await openSettled(path);
  if (!file) return undefined;
  const info = await file.stat().catch(() => undefined);
  if (!info || info.size > maxBytes) {
    file.close();
    return undefined;
  }
  try {
    // Reading the stream to its end closes the file.
    return new TextDecoder().decode(await new Response(file.readable).arrayBuffer());
  } catch {
    return undefined;
  }
}
