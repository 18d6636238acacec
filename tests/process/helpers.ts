/** Helpers for the tests of processes magi leaves behind. */

/** Whether a process is running (a zombie has ended). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
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
