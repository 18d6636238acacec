/**
 * The session's own temp folder: where a model's programs and the file builtins write temp
 * files instead of the shared system temp folder (`$TMPDIR` or `/tmp`). That one holds other
 * programs' repositories, hooks and sockets, thousands of entries no per-call scan can cover,
 * so no sandbox makes it writable; this folder is a default root and `TMPDIR` in the
 * `workspace-write` sandbox.
 *
 * @module
 */
import { socketsParent } from "../exec/unix_socket.ts";

let made: string | undefined;

/**
 * The session's temp folder (a real absolute path): made 0700 on first use, once per magi
 * process, in this user's private folder of magi's sockets (`socketsParent`, which every
 * sandbox covers whole, so no other session's call sees it; in the system temp folder when
 * that folder is not private), and removed with what is in it when magi exits.
 *
 * @throws Error when it cannot be made (the temp folder is not writable)
 */
export function sessionTempDir(): string {
  if (made) return made;
  const parent = socketsParent();
  const dir = Deno.makeTempDirSync({ prefix: "magi-tmp-", ...parent ? { dir: parent } : {} });
  Deno.chmodSync(dir, 0o700);
  const real = Deno.realPathSync(dir);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(real, { recursive: true });
    } catch {
      // gone already
    }
  });
  return made = real;
}
