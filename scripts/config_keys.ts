/**
 * Prints the README's "Config keys" table from the key table (lib/config/keys.ts), so the
 * README can be brought in line with it: `deno run scripts/config_keys.ts`.
 *
 * @module
 */
import { keyTable } from "../lib/config/doc_rows.ts";

console.log(keyTable().join("\n"));
