/**
 * Unix sockets nobody listens on any more, which the sandbox need not cover (SPEC S8.3). A
 * socket file is reachable only while the socket bound to it lives: `bind` makes the file and
 * fails on an existing one, so a file whose listener is gone stays dead until it is removed,
 * and the socket made after that is a new file in a changed folder (read again). A file found
 * dead once is dead for good — as long as it is the same file (device, inode, birth and change
 * times).
 *
 * Finding out costs a `connect`, which is asynchronous: a socket found in a folder's listing is
 * covered as before, and probed once in the background ({@link probeLater}); when the probe is
 * refused and the file is still the one listed, later calls leave it out ({@link isDead}). A
 * socket bound but not yet listening refuses too, and could listen later: only a file made at
 * least {@link SETTLED_S} seconds before the probe counts (a server listens right after it binds).
 *
 * @module
 */

/** How old a refusing socket file must be to count as dead, in seconds. */
export const SETTLED_S = 10;
let settledMs = SETTLED_S * 1000;

/** Sets how old a refusing socket file must be to count as dead (tests: 0), in milliseconds. */
export function setSocketSettledMs(ms: number): void {
  settledMs = ms;
}

/** The identities (see {@link identity}) of socket files found with no listener. */
const dead = new Set<string>();
/** Sockets probed or being probed, by identity: each is probed once. */
const probed = new Set<string>();

/** What tells a socket file from another at the same path. */
export function identity(path: string, st: Deno.FileInfo): string {
  return [path, st.dev, st.ino, st.birthtime?.getTime(), st.ctime?.getTime()].join(":");
}

/** Whether the socket file of this identity was found with no listener. */
export function isDead(id: string): boolean {
  return dead.has(id);
}

/**
 * Probes the socket at `path` once in the background: refused (no listener) while the file is
 * still the one of `id`, it counts as dead from then on. Any other answer keeps it covered.
 */
export function probeLater(path: string, id: string): void {
  if (probed.has(id)) return;
  probed.add(id);
  probe(path, id).catch(() => {});
}

/** Waits for the probes started so far (tests, benchmarks). */
export function probesSettled(): Promise<void> {
  return Promise.all([...running]).then(() => {});
}

const running = new Set<Promise<void>>();

function probe(path: string, id: string): Promise<void> {
  const p = (async () => {
    try {
      const conn = await Deno.connect({ transport: "unix", path });
      conn.close();
    } catch (error) {
      if (!(error instanceof Deno.errors.ConnectionRefused)) return;
      try {
        const st = Deno.lstatSync(path);
        const made = Math.max(st.ctime?.getTime() ?? NaN, st.birthtime?.getTime() ?? 0);
        const old = Date.now() - made >= settledMs;
        if (old && identity(path, st) === id) dead.add(id);
      } catch {
        // gone: its folder changed, and is read again
      }
    }
  })();
  running.add(p);
  return p.finally(() => running.delete(p));
}
