/** Helpers for the tests of processes magi leaves behind. */

/** Whether a process is running (a zombie has ended). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

/**
 * The pids, here, of the processes whose command line holds `text`. A sandboxed tool runs in a
 * PID namespace of its own, so a pid it writes (`$$`) is not its pid outside: find it by a word
 * of its command line (a marker file's path) instead.
 */
export function pidsWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(text) && alive(Number(entry.name))) pids.push(Number(entry.name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The pid a process wrote to `file`, waiting up to 4 s for it to appear. */
export async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    try {
      const pid = Number((await Deno.readTextFile(file)).trim());
      if (pid > 0) return pid;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no pid in ${file}`);
}
