/**
 * `magi` on a terminal without tmux: util-linux `script` gives it a pseudo-terminal, and the
 * screen's bytes are read as they come.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO_DIR, magiArgs, StreamText } from "../helpers.ts";

/** Whether util-linux `script` is installed; without it these tests have nothing to run on. */
export const hasScript = new Deno.Command("sh", { args: ["-c", "command -v script"] })
  .outputSync().success;

/**
 * Runs `magi ARGS` on a terminal from `cwd` (config, cache and state folders in it; the
 * scripted providers' key; `TERM=xterm`; NO_COLOR when `noColor`) and waits until it ends.
 * Once the screen shows `shown`, `whenShown` runs (a fixture tool waits for what it does) —
 * also when the screen never shows it, so the tool does not hold the run.
 *
 * @returns the screen's bytes (escapes included), after asserting that magi exited 0
 */
export async function onTerminal(
  args: string[],
  opts: { cwd: string; noColor: boolean; shown: RegExp; whenShown: () => Promise<void> },
): Promise<string> {
  const magi = ["deno", ...magiArgs(args)].map((a) => `'${a}'`).join(" ");
  const env: Record<string, string> = {
    FAKE_PROVIDER_KEY: "fake-provider-key-0001",
    XDG_CACHE_HOME: join(opts.cwd, "cache"),
    XDG_STATE_HOME: join(opts.cwd, "state"),
    XDG_CONFIG_HOME: join(opts.cwd, "config"),
    TERM: "xterm",
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? opts.cwd,
    DENO_DIR,
  };
  if (opts.noColor) env.NO_COLOR = "1";
  const child = new Deno.Command("script", {
    args: ["-qec", magi, "/dev/null"],
    cwd: opts.cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const screen = new StreamText(child.stdout);
  const errors = new StreamText(child.stderr);
  await screen.until(opts.shown).finally(opts.whenShown);
  const [status, text, stderr] = await Promise.all([child.status, screen.done, errors.done]);
  assert.equal(status.code, 0, text + stderr);
  return text;
}
