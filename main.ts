/**
 * magi's command line: parse, build the runtime, dispatch. See `lib/cli/`.
 *
 * @module
 */
import { main } from "./lib/cli/main.ts";
import { sweepNow } from "./lib/exec/sweep.ts";

if (import.meta.main) {
  const status = await main(Deno.args);
  // What left its process group and outlived its tool is ended before magi goes.
  sweepNow();
  Deno.exit(status);
}
