/**
 * magi's version, from `deno.json`.
 *
 * @module
 */
import meta from "../../deno.json" with { type: "json" };

/** The version string, such as "0.1.0". */
export const VERSION: string = meta.version;
