/**
 * What the file builtins share: the roots check as a result, error wording, binary
 * detection, safe display of text, the write cap and the diff shown to the person.
 *
 * @module
 */
import type * as Diff from "diff";
import { checkPath } from "../../policy/roots.ts";
import { protectedWrite } from "../../policy/protected.ts";
import { type HiddenSet, hiddenWhy } from "../../confinement/sandbox_paths.ts";
import type { BuiltinContext, BuiltinResult } from "./builtin.ts";

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
  if (typeof checked === "string") return { said: checked + "\n", isError: true };
  const hidden = hiddenRefusal(path, checked.real, ctx, action);
  if (hidden) return { said: hidden + "\n", isError: true };
  if (action === "write" || action === "edit") {
    // What the person's own git, shell or magi would run later, outside any sandbox.
    const why = protectedWrite(checked.real, ctx.env, ctx.protect, ctx.roots);
    if (why) {
      return {
        said: `Cannot ${action} "${path}": ${why} is protected (edit it yourself, outside magi)\n`,
        isError: true,
      };
    }
  }
  return checked;
}

/**
 * The refusal of a path the sandbox hides (a credential store, `sandbox.deny_read`, magi's own
 * files), such as `Cannot read ".aws/credentials": a credential store, hidden from tools`;
 * undefined when it is not hidden. `real`: the path with every symlink resolved.
 */
export function hiddenRefusal(
  path: string,
  real: string,
  ctx: { hidden?: HiddenSet },
  action: string,
): string | undefined {
  const why = hiddenWhy(real, ctx.hidden);
  return why ? `Cannot ${action} "${path}": ${why}, hidden from tools` : undefined;
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

/** The default cap on the bytes `write` and `edit` may put in a file (config `limits.write_bytes`). */
export const DEFAULT_WRITE_BYTES = 32 * 1024 * 1024;

/** The UTF-8 length of `text` in bytes, counted without encoding it. */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x800) n += c >= 0xd800 && c < 0xdc00 ? 1 : 2; // a surrogate pair: 4 bytes
    else if (c >= 0x80) n += 1;
  }
  return n;
}

/**
 * An error result when `text` is over the write cap, naming the limit; undefined otherwise.
 * Cheap for a huge text: its length alone decides when it is clearly over or under.
 *
 * @param ctx its `writeBytes` (bytes), or {@link DEFAULT_WRITE_BYTES}
 */
export function overCap(
  action: string,
  path: string,
  text: string,
  ctx: { writeBytes?: number },
): BuiltinResult | undefined {
  const cap = ctx.writeBytes ?? DEFAULT_WRITE_BYTES;
  if (text.length * 3 <= cap) return undefined;
  const bytes = text.length > cap ? text.length : utf8Length(text);
  if (bytes <= cap) return undefined;
  const size = text.length > cap ? `more than ${cap}` : `${bytes}`;
  return {
    said: `Cannot ${action} "${path}": the content is ${size} bytes, over the limit of ${cap} ` +
      "bytes (config key `limits.write_bytes`)\n",
    isError: true,
  };
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
