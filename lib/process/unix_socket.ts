/**
 * A Unix socket magi serves for its tools (approvals, the Deno permission broker): in a
 * fresh private folder, not keeping magi alive, the folder removed when magi exits; and the
 * newline-delimited JSON both speak on it.
 *
 * @module
 */
import { join } from "node:path";

/**
 * Listens on `<new temp folder>/<name>` and hands each connection to `serve` (a failing
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
  const dir = Deno.makeTempDirSync({ prefix });
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
