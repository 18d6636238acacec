/**
 * Ending the processes that left their process group. Ending a child's group ends what it
 * started — unless a descendant called `setsid` (a daemon, `setsid cmd &`) and so left the
 * group. Every child magi starts carries a tag in its environment, `MAGI_PROCESS_TAG`, which
 * its descendants inherit (the approach of Jenkins' ProcessTreeKiller). Once a child has
 * ended, its tag is swept: every process of this user whose environment holds the tag is
 * killed. Linux only (`/proc/PID/environ`); elsewhere sweeping does nothing.
 *
 * A sweep starts sh and grep and reads the environment of every process (about 25 ms), so
 * ended tags are gathered and swept together every few seconds — and at once when magi exits
 * ({@link sweepNow}). A long-lived magi making calls all the time spends under 1 % on it.
 *
 * @module
 */

/** The environment variable that carries a child's tag. */
export const TAG_VARIABLE = "MAGI_PROCESS_TAG";

/** How long ended tags wait to be swept together, in milliseconds. */
const GATHER_MS = 5000;

const pending = new Set<string>();
let timer: ReturnType<typeof setTimeout> | undefined;

/** A new tag for one child. */
export function newTag(): string {
  return crypto.randomUUID();
}

/** Marks a tag whose child has ended: what still carries it is killed soon. */
export function sweepLater(tag: string): void {
  pending.add(tag);
  if (timer !== undefined) return;
  timer = setTimeout(() => sweepNow(), GATHER_MS);
  Deno.unrefTimer(timer as unknown as number);
}

/**
 * Kills, now, every process carrying one of the ended tags (and `more`, such as the tags of
 * children still running when magi itself is ended). Never throws.
 *
 * Deno lets only `--allow-all` read `/proc`, so GNU grep reads the environments:
 * `grep -laF -e TAG… /proc/[0-9]*\/environ`, started by `/bin/sh` for the glob.
 *
 * @returns how many processes were sent SIGKILL
 */
export function sweepNow(more: Iterable<string> = []): number {
  // Only a timer that is set: the first `clearTimeout` loads Node's timers (about 5 ms).
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  const tags = new Set([...pending, ...more]);
  pending.clear();
  if (tags.size === 0 || Deno.build.os !== "linux") return 0;
  let listed: string;
  try {
    const found = new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'exec grep -laF "$@" /proc/[0-9]*/environ',
        "sh",
        ...[...tags].flatMap((tag) => ["-e", `${TAG_VARIABLE}=${tag}`]),
      ],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    listed = new TextDecoder().decode(found.stdout);
  } catch {
    return 0; // No sh or grep, or not allowed to start them (a Worker): nothing to do here.
  }
  let killed = 0;
  for (const line of listed.split("\n")) {
    const pid = Number(/^\/proc\/(\d+)\/environ$/.exec(line)?.[1]);
    if (!Number.isInteger(pid) || pid <= 1 || pid === Deno.pid) continue;
    try {
      Deno.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // Already gone.
    }
  }
  return killed;
}
