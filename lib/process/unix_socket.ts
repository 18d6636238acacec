/**
 * A Unix socket magi serves for its tools (approvals, the Deno permission broker): in a
 * fresh private folder, not keeping magi alive, the folder removed when magi exits.
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
