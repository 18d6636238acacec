/**
 * Driving `magi chat` on a real terminal: tmux (its own server socket per test), keys sent
 * with `send-keys`, the screen read with `capture-pane`, waits on screen content with a
 * deadline.
 *
 * @module
 */
import { join } from "node:path";
import { DENO_DIR, REPO } from "../helpers.ts";

/** Whether tmux is installed (CI installs it: .ci/run). */
export const hasTmux = new Deno.Command("sh", { args: ["-c", "command -v tmux"] }).outputSync()
  .success;

/** A tmux pane running one command. */
export class Pane implements AsyncDisposable {
  readonly #socket: string;

  private constructor(socket: string) {
    this.#socket = socket;
  }

  static async start(
    command: string[],
    opts: { cwd: string; env: Record<string, string> },
  ): Promise<Pane> {
    const socket = `magi-test-${crypto.randomUUID().slice(0, 8)}`;
    const pane = new Pane(socket);
    const env = Object.entries(opts.env).map(([k, v]) => `${k}=${quote(v)}`).join(" ");
    const line = `cd ${quote(opts.cwd)} && exec env -i ${env} ${command.map(quote).join(" ")}`;
    await pane.#tmux(["new-session", "-d", "-x", "120", "-y", "40", "sh", "-c", line]);
    await pane.#tmux(["set-option", "-g", "remain-on-exit", "on"]);
    return pane;
  }

  async #tmux(args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", { args: ["-L", this.#socket, ...args] }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return text;
  }

  /** The screen as text; with `escapes`, its styling too. */
  screen(escapes = false): Promise<string> {
    return this.#tmux(["capture-pane", "-p", "-J", ...(escapes ? ["-e"] : []), "-S", "-200"]);
  }

  /** Types text (literally), or a key such as `Enter`, `C-c`, `Tab`. */
  async keys(text: string, key?: string): Promise<void> {
    if (text !== "") await this.#tmux(["send-keys", "-l", text]);
    if (key) await this.#tmux(["send-keys", key]);
  }

  /**
   * Waits until the screen matches, polling it; throws with the screen after `ms`.
   * @returns the screen that matched
   */
  async waitFor(pattern: RegExp, ms = 20_000, escapes = false): Promise<string> {
    const deadline = Date.now() + ms;
    let last = "";
    while (Date.now() < deadline) {
      last = await this.screen(escapes);
      if (pattern.test(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the screen never showed ${pattern}; it shows:\n${last}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await new Deno.Command("tmux", { args: ["-L", this.#socket, "kill-server"] }).output();
  }
}

function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** `magi ARGS` as a command line for a pane, with a test's environment. */
export function magiInPane(
  args: string[],
  dir: string,
  extraEnv: Record<string, string> = {},
): { command: string[]; env: Record<string, string> } {
  const env: Record<string, string> = {
    FAKE_PROVIDER_KEY: "fake-provider-key-0001",
    HOME: join(dir, "home"),
    XDG_CACHE_HOME: join(dir, "cache"),
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CONFIG_HOME: join(dir, "config-home"),
    TERM: "xterm-256color",
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR,
    ...extraEnv,
  };
  const command = ["deno", "run", "-A", "--quiet", "--config", join(REPO, "deno.json")]
    .concat([join(REPO, "main.ts"), ...args]);
  return { command, env };
}
