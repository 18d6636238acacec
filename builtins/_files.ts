/**
 * What the file builtins share: the roots check as a result, error wording, binary
 * detection, safe display of text, atomic writes and the diff shown to the person.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type * as Diff from "diff";
import { checkPath } from "../lib/policy/roots.ts";
import type { BuiltinContext, BuiltinResult } from "../lib/registry/builtins.ts";

let diff: typeof Diff | undefined;

/**
 * The `diff` package, loaded on the first diff rather than at start-up — by `import()`, not
 * `require`: a body Worker may not read `node_modules`, but Deno's module loader can.
 */
export async function diffPackage(): Promise<typeof Diff> {
  return diff ??= await import("diff");
}

/** Resolves a path given in a call and checks it against the roots. */
export function allowed(
  path: string,
  ctx: BuiltinContext,
  action: string,
): { real: string } | BuiltinResult {
  const checked = checkPath(path, ctx.cwd, ctx.roots, action);
  return typeof checked === "string" ? { said: checked + "\n", isError: true } : checked;
}

/** Whether {@link allowed} refused the path. */
export function refused(value: { real: string } | BuiltinResult): value is BuiltinResult {
  return !("real" in value);
}

/** Why a file operation failed, in a few words. */
export function describeError(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file or directory";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.IsADirectory) return "it is a directory";
  if (error instanceof Deno.errors.NotADirectory) return "a part of the path is not a directory";
  return error instanceof Error ? error.message : String(error);
}

/** An error result: `Cannot <action> "<path>": <reason>`. */
export function failure(action: string, path: string, error: unknown): BuiltinResult {
  return { said: `Cannot ${action} "${path}": ${describeError(error)}\n`, isError: true };
}

/** Whether bytes look binary: a NUL byte within the first 8192 bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/** Names a binary format by its first bytes, such as "PNG image"; "" when unknown. */
export function binaryKind(head: Uint8Array): string {
  const ascii = String.fromCharCode(...head.subarray(0, 16));
  const kinds: [string | RegExp, string][] = [
    ["\x89PNG", "PNG image"],
    ["\xff\xd8\xff", "JPEG image"],
    ["GIF8", "GIF image"],
    ["%PDF", "PDF document"],
    ["\x7fELF", "ELF executable"],
    ["PK\x03\x04", "zip archive"],
    ["\x1f\x8b", "gzip data"],
    ["\0asm", "WebAssembly module"],
    ["SQLite format 3", "SQLite database"],
    [/^RIFF....WEBP/s, "WebP image"],
  ];
  for (const [magic, name] of kinds) {
    if (typeof magic === "string" ? ascii.startsWith(magic) : magic.test(ascii)) return name;
  }
  return "";
}

// C0 controls except tab, newline and carriage return; and DEL. Shown as U+FFFD so a
// file's escape codes or NUL bytes never reach a terminal or look like binary output.
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Text with control characters (other than tab) replaced by U+FFFD. */
export function safeText(text: string): string {
  return text.replace(CONTROL, "\ufffd");
}

/** Counts lines the way a person does: a last line without a newline still counts. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/**
 * Writes a file atomically: the bytes go to a temp file beside it, are flushed to disk,
 * and the temp file is renamed over the target, so a reader (or a crash) sees the old
 * file or the new one, never a part. Keeps `mode` when given.
 *
 * @param real the target's real path (symlinks already resolved)
 * @param mode permission bits for the file, such as 0o644
 * @throws Deno errors when the folder cannot be written
 */
export async function atomicWrite(real: string, bytes: Uint8Array, mode: number): Promise<void> {
  const dir = dirname(real);
  // A name near the 255-byte limit leaves no room for a prefix and a suffix.
  const name = new TextEncoder().encode(basename(real)).length > 200 ? "" : basename(real);
  const tmp = join(dir, `.${name}.magi-${crypto.randomUUID().slice(0, 8)}.tmp`);
  // The folder was checked against the roots by its real path; a symlink put in its place
  // since then (a race with another process) must not carry the write elsewhere.
  sameFolder(dir);
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    try {
      let at = 0;
      while (at < bytes.length) at += await file.write(bytes.subarray(at));
      await Deno.chmod(tmp, mode & 0o7777);
      await file.sync();
    } finally {
      file.close();
    }
    sameFolder(dir);
    await Deno.rename(tmp, real);
  } catch (error) {
    await Deno.remove(tmp).catch(() => {});
    throw error;
  }
}

/** Throws when `dir` no longer is the real folder it was (a symlink took its place). */
function sameFolder(dir: string): void {
  if (Deno.realPathSync(dir) !== dir) {
    throw new Deno.errors.PermissionDenied(`the folder "${dir}" changed while writing`);
  }
}

/**
 * A unified diff (`---`/`+++` headers and hunks) between two texts, and the counts of added
 * and removed lines. Lines are compared as they are (a CRLF line differs from an LF one).
 */
export async function unifiedDiff(
  name: string,
  before: string,
  after: string,
  created = false,
): Promise<{ text: string; added: number; removed: number }> {
  const { formatPatch, structuredPatch } = await diffPackage();
  const patch = structuredPatch(created ? "/dev/null" : name, name, before, after, "", "", {
    context: 3,
  });
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
  }
  const text = patch.hunks.length === 0 ? "" : formatPatch(patch, {
    includeIndex: false,
    includeUnderline: false,
    includeFileHeaders: true,
  });
  return { text, added, removed };
}
