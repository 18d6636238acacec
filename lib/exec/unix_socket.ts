/**
 * A Unix socket magi serves for its tools (approvals, the Deno permission broker): in a
 * fresh private folder, not keeping magi alive, the folder removed when magi exits; and the
 * newline-delimited JSON both speak on it.
 *
 * @module
 */
import { join } from "node:path";

/** The name of the folder of a user's sockets, before the user's id. */
export const SOCKETS_PARENT = "magi-sockets-";

/**
 * The one folder of this user's sockets in a temp folder: `<temp>/magi-sockets-<uid>`, made
 * 0700 when missing. Every socket magi serves gets its own folder inside it, so the sandbox
 * covers all sessions' sockets with one empty folder (not one mount per session). Undefined
 * when it is not a private folder of this user's (made by someone else, a symlink, group- or
 * world-accessible): the socket's folder then goes straight into the temp folder.
 *
 * @param temp the temp folder (default: `$TMPDIR`, or `/tmp`)
 */
export function socketsParent(temp = tempDir()): string | undefined {
  const uid = ownUid();
  if (uid === undefined) return undefined;
  const dir = join(temp, `${SOCKETS_PARENT}${uid}`);
  try {
    Deno.mkdirSync(dir, { mode: 0o700 });
  } catch {
    // there already (checked below), or the temp folder is not writable
  }
  try {
    const st = Deno.lstatSync(dir);
    const ok = st.isDirectory && st.uid === uid && ((st.mode ?? 0o777) & 0o077) === 0;
    return ok ? dir : undefined;
  } catch {
    return undefined;
  }
}

let uid: number | null | undefined;

/**
 * This process's user id, read from `/proc/self`'s owner (Linux; `Deno.uid()` would need
 * `--allow-sys`, which magi's own permissions leave out), else from the owner of a folder it
 * makes (Deno asks `--allow-all` for `/proc/self`, which `deno task magi` does not give);
 * undefined where neither can be read.
 */
export function ownUid(): number | undefined {
  if (uid === undefined) {
    try {
      uid = Deno.statSync("/proc/self").uid;
    } catch {
      uid = madeOwner();
    }
  }
  return uid ?? undefined;
}

/** The owner of a new empty folder in the temp folder (removed at once), or null. */
function madeOwner(): number | null {
  try {
    const dir = Deno.makeTempDirSync({ prefix: "magi-uid-" });
    try {
      return Deno.statSync(dir).uid;
    } finally {
      Deno.removeSync(dir);
    }
  } catch {
    return null;
  }
}

function tempDir(): string {
  try {
    return Deno.env.get("TMPDIR") || "/tmp";
  } catch {
    return "/tmp";
  }
}

/**
 * Listens on `<new folder in socketsParent()>/<name>` and hands each connection to `serve` (a failing
 * connection costs only itself).
 *
 * @param prefix the temp folder's name prefix, such as "magi-approve-"
 * @returns the socket's absolute path
 */
export function serveUnixSocket(
  prefix: string,
  name: string,
  serve: (conn: Deno.UnixConn) => Promise<void>,
): string {
  const dir = privateSocketDir(prefix);
  const path = join(dir, name);
  const listener = Deno.listen({ transport: "unix", path });
  listener.unref();
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already gone
    }
  });
  (async () => {
    for await (const conn of listener) serve(conn).catch(() => {});
  })().catch(() => {});
  return path;
}

/**
 * A new private folder for one socket: in {@link socketsParent}, else in the temp folder.
 *
 * @returns its absolute path
 */
export function privateSocketDir(prefix: string): string {
  const dir = Deno.makeTempDirSync({ dir: socketsParent(), prefix });
  Deno.chmodSync(dir, 0o700);
  return dir;
}

/**
 * Answers newline-delimited JSON on one connection until the peer closes it: each non-empty
 * line goes to `answer`, whose result (unless undefined: no reply) is written back as one
 * line of JSON. The connection is closed at the end.
 */
export async function answerJsonLines(
  conn: Deno.Conn,
  answer: (line: string) => Promise<unknown> | unknown,
): Promise<void> {
  const encoder = new TextEncoder();
  let buffered = "";
  try {
    for await (const chunk of conn.readable.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line === "") continue;
        const reply = await answer(line);
        if (reply === undefined) continue;
        const bytes = encoder.encode(JSON.stringify(reply) + "\n");
        for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
      }
    }
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the peer
    }
  }
}
