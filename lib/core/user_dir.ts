/**
 * The person's own magi folder, `$XDG_CONFIG_HOME/magi` (or `~/.config/magi`): where their
 * config, AGENTS.md, skills and sub-agent profiles live.
 *
 * @module
 */
import { join } from "node:path";

/** The person's magi config folder, or undefined when neither XDG_CONFIG_HOME nor HOME is set. */
export function userMagiDir(env: Record<string, string>): string | undefined {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, ".config") : undefined);
  return base ? join(base, "magi") : undefined;
}
