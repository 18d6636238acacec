/**
 * magi's command line: parse, build the runtime, dispatch. See `lib/cli/`.
 *
 * @module
 */
import { main } from "./lib/cli/main.ts";

if (import.meta.main) Deno.exit(await main(Deno.args));
