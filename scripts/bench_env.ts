/**
 * The environment a benchmark runs magi in: a fresh temp HOME for magi's config, cache and
 * state, with Deno's own cache left where it is (it would follow XDG_CACHE_HOME: a cold start
 * each run).
 *
 * @module
 */
import { join } from "node:path";

/** A fresh temp folder and the environment that points magi's folders into it. */
export async function benchEnv(
  prefix: string,
): Promise<{ home: string; env: Record<string, string> }> {
  const home = await Deno.makeTempDir({ prefix });
  const own = Deno.env.toObject();
  const env = {
    ...own,
    DENO_DIR: own.DENO_DIR ??
      join(own.XDG_CACHE_HOME || join(own.HOME ?? "/root", ".cache"), "deno"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
  };
  return { home, env };
}
