/**
 * One warm Deno cache for every process the tests start. Loaded before each test file
 * (`deno test --preload tests/shared_deno_dir.ts`, in the `test` task), it sets `DENO_DIR` in
 * this process's environment to the cache this test run uses, so that every child inherits it.
 *
 * Why: Deno puts its cache under `$XDG_CACHE_HOME/deno` when `DENO_DIR` is unset, and most tests
 * give magi (and the MCP servers, the conformance client's magi, `deno eval`) a fresh
 * `XDG_CACHE_HOME` of their own. Without this, each such child transpiled magi's ~190 modules
 * and analysed its npm packages again: about 0.3 s of CPU more per start (0.52 s against 0.20 s
 * for `magi --version` here), over hundreds of starts. magi's own caches still go where each
 * test's XDG folders say.
 *
 * @module
 */
import { DENO_DIR } from "./helpers.ts";

Deno.env.set("DENO_DIR", DENO_DIR);
