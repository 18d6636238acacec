/**
 * The system temp folder.
 *
 * @module
 */

/** The system temp folder: `$TMPDIR`, or `/tmp`. */
export function systemTempDir(): string {
  try {
    return Deno.env.get("TMPDIR") || "/tmp";
  } catch {
    return "/tmp";
  }
}
