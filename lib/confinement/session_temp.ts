/**
 * The session's own temp folder: where a model's programs and the file builtins write temp
 * files instead of the shared system temp folder (`$TMPDIR` or `/tmp`). That one holds other
 * programs' repositories, hooks and sockets, thousands of entries no per-call scan can cover,
 * so no sandbox makes it writable; this folder is a default root and `TMPDIR` in the
 * `workspace-write` sandbox.
 *
 * @module
 */
import { basename } from "node:path";
import { ownUid, socketsParent } from "../exec/unix_socket.ts";

let made: string | undefined;

/**
 * The session's temp folder (a real absolute path): made 0700 on first use, once per magi
 * process, in this user's private folder of magi's sockets (`socketsParent`, which every
 * sandbox covers whole, so no other session's call sees it; in the system temp folder when
 * that folder is not private), and removed with what is in it when magi exits. When `TMPDIR`
 * is a session's temp folder already (0700, named `magi-tmp-*`: magi runs inside
 * another magi's sandbox), that one, left for its session to remove.
 *
 * @throws Error when it cannot be made (the temp folder is not writable)
 */
export function sessionTempDir(): string {
  if (made) return made;
  // A magi started inside a session's sandbox (`magi builtin write "$TMPDIR/x"` in a `run`
  // line) shares that session's folder, `TMPDIR` there: no wider than the folder TMPDIR names
  // was as a default root before.
  const inherited = sessionTempOf(tempEnv());
  if (inherited) return made = inherited;
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

/** `dir` when it is a session's temp folder (see {@link sessionTempDir}). */
function sessionTempOf(dir: string | undefined): string | undefined {
  if (!dir) return undefined;
  try {
    const real = Deno.realPathSync(dir);
    if (!/^magi-tmp-/.test(basename(real))) return undefined;
    const st = Deno.statSync(real);
    // (The user's id cannot be read without `--allow-all` in magi's own permissions: another
    // user's 0700 folder is unreadable anyway, but to root.)
    const uid = ownUid();
    const mine = uid === undefined || st.uid === uid;
    return st.isDirectory && mine && ((st.mode ?? 0o777) & 0o077) === 0 ? real : undefined;
  } catch {
    return undefined;
  }
}

function tempEnv(): string | undefined {
  try {
    return Deno.env.get("TMPDIR");
  } catch {
    return undefined;
  }
}
