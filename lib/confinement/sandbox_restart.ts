/**
 * Starting a sandboxed command again when a socket it covers went away while bwrap set it up
 * (SPEC S8.3). The sockets to cover are looked at when the command is made, milliseconds
 * before bwrap mounts an empty file over each; one removed in between leaves bwrap a mount
 * point to make, which fails on a read-only folder (`bwrap: Can't create file at PATH: Read-only
 * file system`, or `Can't mkdir parents for PATH` when its folder went too), status 1, before
 * the command ran. Then the command is made again (the sockets looked at anew) and started in
 * its place, a few times; never with a socket left uncovered. Where sockets come and go faster
 * than bwrap starts, looking again does not help: the nearest folder still there above the one
 * that went away is shown empty to the next try instead (the launcher decides whether it may
 * be: never a writable folder, nor one holding a root or the call's own sockets).
 *
 * @module
 */
import { dirname } from "node:path";
import type { Restart } from "../core/types.ts";

/** The nearest folder at or above `dir` that is there now. */
function standing(dir: string): string {
  for (let d = dir;; d = dirname(d)) {
    try {
      if (Deno.lstatSync(d).isDirectory) return d;
    } catch {
      // gone too
    }
    if (dirname(d) === d) return d;
  }
}

/** How many times a command is made again before the call fails. */
export const RESTARTS = 4;

/** What bwrap writes first to stderr when its setup fails. */
const PREFIX = "bwrap: Can't ";

/**
 * The restart for one command.
 *
 * @param covers the sockets and socket folders the command covers
 * @param rebuild makes the command again, with its covers
 * @param left how many more starts are allowed
 */
export function sandboxRestart(
  covers: readonly string[],
  rebuild: (churned: readonly string[]) => {
    program: string;
    args: string[];
    covers: readonly string[];
  },
  left = RESTARTS,
  churned: readonly string[] = [],
): Restart {
  return {
    prefix: PREFIX,
    again(stderr) {
      const gone = goneCover(stderr, covers);
      if (gone === undefined) return undefined;
      if (left <= 0) {
        return {
          fail: `sandbox: a socket went away while the sandbox was set up (${gone}); ` +
            `the call did not run — try again`,
        };
      }
      const more = [...new Set([...churned, standing(dirname(gone))])];
      let next;
      try {
        next = rebuild(more);
      } catch (error) {
        return { fail: (error as Error).message };
      }
      return {
        program: next.program,
        args: next.args,
        restart: sandboxRestart(next.covers, rebuild, left - 1, more),
      };
    },
  };
}

/**
 * The covered path a setup failure names, when it is bwrap's one line about a mount point it
 * could not make and that path is no longer a socket or folder (it went away); otherwise
 * undefined (the failure is the command's own, or not this one).
 */
export function goneCover(stderr: string, covers: readonly string[]): string | undefined {
  const line = stderr.replace(/\n$/, "");
  if (!line.startsWith(PREFIX) || line.includes("\n")) return undefined;
  // bwrap names the path as given, or under /newroot (a failed mount itself).
  // Or a folder above one, gone with it: bwrap cannot make the mount point's folders where the
  // shared temp folder is read-only (`Can't mkdir …/gone: Read-only file system`).
  const folder = /^bwrap: Can't [^/]*?(?:\/newroot)?(\/[^:]+): /.exec(line)?.[1];
  const named = covers.filter((p) =>
    line.includes(` ${p}: `) || line.includes(`/newroot${p}: `) ||
    (folder !== undefined && p.startsWith(folder + "/"))
  );
  for (const p of named.sort((a, b) => b.length - a.length)) {
    try {
      const st = Deno.lstatSync(p);
      if (st.isSocket || st.isDirectory) continue;
    } catch {
      // gone
    }
    return p;
  }
  return undefined;
}
