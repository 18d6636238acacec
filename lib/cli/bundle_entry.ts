/**
 * The entry of magi's bundled build (scripts/bundle.ts, what `deno task install` runs):
 * `main.ts`'s work, with every module magi imports late (lib/core/lazy_require.ts) named by a
 * literal `import()`, so that the bundler makes each a chunk of the bundle. A start then loads
 * one file and the chunks its command needs, instead of about 120 modules; under `deno run
 * main.ts` nothing imports this file, and the late modules stay out of the start-up graph.
 *
 * @module
 */
import { useBundledModules } from "../core/lazy_require.ts";
import { sweepNow } from "../exec/sweep.ts";
import { main } from "./main.ts";

/**
 * Every late module: path from the repository's folder → its import. A test checks that each
 * `lateImport(sourceUrl(…))` in lib/ and each command of lib/cli/main.ts is here.
 */
export const LATE_MODULES: Record<string, () => Promise<unknown>> = {
  "lib/cli/builtin.ts": () => import("./builtin.ts"),
  "lib/cli/call.ts": () => import("./call.ts"),
  "lib/cli/chat.ts": () => import("./chat.ts"),
  "lib/cli/check.ts": () => import("./check.ts"),
  "lib/cli/config.ts": () => import("./config.ts"),
  "lib/cli/context.ts": () => import("./context.ts"),
  "lib/cli/mcp.ts": () => import("./mcp.ts"),
  "lib/cli/mcp_login.ts": () => import("./mcp_login.ts"),
  "lib/cli/new.ts": () => import("./new.ts"),
  "lib/cli/policy.ts": () => import("./policy.ts"),
  "lib/cli/run.ts": () => import("./run.ts"),
  "lib/cli/sessions.ts": () => import("./sessions.ts"),
  "lib/cli/skills.ts": () => import("./skills.ts"),
  "lib/cli/tools.ts": () => import("./tools.ts"),
  "lib/sources/mcp/sdk.ts": () => import("../sources/mcp/sdk.ts"),
  "lib/terminal/markdown_render.ts": () => import("../terminal/markdown_render.ts"),
};

if (import.meta.main) {
  useBundledModules(LATE_MODULES);
  const status = await main(Deno.args);
  // What left its process group and outlived its tool is ended before magi goes.
  sweepNow();
  Deno.exit(status);
}
