/**
 * Where the files shipped with magi live: the `tools/` folder beside `main.ts`.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The shipped tools folder (absolute). */
export function shippedToolsDir(): string {
  return fileURLToPath(new URL("../tools", import.meta.url));
}
