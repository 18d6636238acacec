/**
 * Images from tool results to the providers that take them (OpenAI and Anthropic image
 * input). A tool result's image attachments (an MCP server's image blocks, already masked by
 * the pipeline) of a type both APIs take and within config `limits.image_bytes` (each image;
 * 0 sends none) are written, from the result in memory, to the session's own images folder
 * (`<session>/images/`, 0700, which no sandbox mount makes writable) as `<SHA-256>.<ext>`
 * (0600), and recorded with the tool result as that file and its digest — never as base64 in
 * said or the transcript.
 *
 * At each request the file is read again and sent only when it is still the one recorded: its
 * path is the session's images folder and its digest's name ({@link sessionImages} checks this
 * for every transcript, a resumed one too), the folder and the file are what they were (not a
 * symlink, a regular file) and the bytes read have the recorded SHA-256. Anything else is left
 * out with a note the model reads (`[magi: image … left out]`), so no file can be swapped in
 * between the record and the send. Anthropic gets images as `image` blocks inside the
 * `tool_result`, OpenAI Chat Completions (whose tool messages carry text only) as a user
 * message of `image_url` parts after the turn's tool messages.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import type { ToolResult } from "../runtime/run_tool.ts";
import { decodeBase64 } from "../sources/mcp/content.ts";
import { createPrivateFile, privateDir } from "../core/private.ts";
import { readFullSync } from "../core/bytes.ts";

/**
 * An image a tool result carries: its type, the file in the session's images folder holding
 * its (masked) bytes, and their SHA-256 (64 lowercase hex digits; absent in transcripts from
 * before it was recorded, whose images are left out).
 */
export interface ImageRef {
  mime_type: string;
  path: string;
  sha256?: string;
}

/** The image types OpenAI and Anthropic both take, with the extension of their files. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** The image types OpenAI and Anthropic both take. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(Object.keys(EXTENSIONS));

/** The most images one tool result sends. */
export const MAX_IMAGES = 8;

/** The largest image file read at a request, in bytes (the most `limits.image_bytes` allows). */
export const MAX_IMAGE_FILE_BYTES = 20 * 1024 * 1024;

/** A session's images folder (magi's own: read-only to sandboxed programs). */
export function imagesDir(sessionDir: string): string {
  return join(sessionDir, "images");
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The file an image of this type and digest has in `dir`. */
function fileFor(dir: string, mimeType: string, sha256: string): string {
  return join(dir, `${sha256}.${EXTENSIONS[mimeType]}`);
}

/**
 * Writes `bytes` as `path` unless the file there already holds them (the same image sent
 * twice); a file there that is not them (not a regular file, other bytes) is replaced.
 *
 * @throws Deno.errors.* when it cannot be written
 */
function keep(path: string, bytes: Uint8Array, sha256: string): void {
  try {
    createPrivateFile(path, bytes, false);
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  if (readChecked(path, sha256) !== undefined) return;
  Deno.removeSync(path);
  createPrivateFile(path, bytes, false);
}

/**
 * The images of `result` to send with it: those of a type the providers take and at most
 * `maxBytes` each (at most {@link MAX_IMAGES}), written from the result's (masked) bytes to
 * `<sessionDir>/images/`. An image that cannot be written is not sent (said already names the
 * spill file holding it).
 */
export function imageRefs(result: ToolResult, maxBytes: number, sessionDir: string): ImageRef[] {
  if (maxBytes <= 0) return [];
  const dir = imagesDir(sessionDir);
  const refs: ImageRef[] = [];
  for (const a of result.attachments ?? []) {
    const mimeType = a.mimeType ?? "";
    if (a.block.type !== "image" || !IMAGE_TYPES.has(mimeType)) continue;
    if (typeof a.block.data !== "string") continue;
    const bytes = decodeBase64(a.block.data);
    if (!bytes || bytes.length === 0 || bytes.length > maxBytes) continue;
    const sha256 = sha256Hex(bytes);
    const path = fileFor(dir, mimeType, sha256);
    try {
      privateDir(dir);
      if (!Deno.lstatSync(dir).isDirectory) continue; // a symlink in its place: none kept
      keep(path, bytes, sha256);
    } catch {
      continue;
    }
    refs.push({ mime_type: mimeType, path, sha256 });
    if (refs.length >= MAX_IMAGES) break;
  }
  return refs;
}

/** The note the model reads in place of an image left out. */
function leftOut(ref: Partial<ImageRef>, why: string): string {
  const name = typeof ref.path === "string" ? basename(ref.path) : "(no file)";
  return `[magi: image ${name} ${why}; left out]`;
}

/**
 * The images of a transcript's tool result that are this session's: each a known type, a
 * digest, and a path that is exactly its file in `<sessionDir>/images/`. Any other (a
 * transcript edited, or written before images were kept there) is left out with a note.
 */
export function sessionImages(
  refs: unknown,
  sessionDir: string,
): { images: ImageRef[]; notes: string[] } {
  const images: ImageRef[] = [];
  const notes: string[] = [];
  const dir = imagesDir(sessionDir);
  for (const ref of Array.isArray(refs) ? refs.slice(0, MAX_IMAGES) : []) {
    const r = (typeof ref === "object" && ref !== null ? ref : {}) as Partial<ImageRef>;
    const ok = typeof r.mime_type === "string" && IMAGE_TYPES.has(r.mime_type) &&
      typeof r.sha256 === "string" && /^[0-9a-f]{64}$/.test(r.sha256) &&
      r.path === fileFor(dir, r.mime_type, r.sha256);
    if (ok) images.push({ mime_type: r.mime_type!, path: r.path!, sha256: r.sha256 });
    else notes.push(leftOut(r, "is not one this session recorded in its images folder"));
  }
  return { images, notes };
}

/**
 * An image file's bytes, when it is still the one recorded: its name is its digest's, neither
 * it nor its folder is a symlink, it is a regular file (the one opened is the one looked at)
 * of at most {@link MAX_IMAGE_FILE_BYTES}, and the bytes read have SHA-256 `sha256`.
 *
 * @returns the bytes, or undefined (why is not told: the image is left out either way)
 */
function readChecked(path: string, sha256: string): Uint8Array | undefined {
  try {
    if (!/^[0-9a-f]{64}$/.test(sha256) || !basename(path).startsWith(`${sha256}.`)) return;
    if (!Deno.lstatSync(dirname(path)).isDirectory) return;
    const seen = Deno.lstatSync(path);
    if (!seen.isFile || seen.size > MAX_IMAGE_FILE_BYTES) return;
    using file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    if (!opened.isFile || opened.ino !== seen.ino || opened.dev !== seen.dev) return;
    if (opened.size > MAX_IMAGE_FILE_BYTES) return;
    const bytes = new Uint8Array(opened.size);
    const at = readFullSync(file, bytes);
    // A file grown since it was looked at is not the one recorded either.
    if (at !== bytes.length || file.readSync(new Uint8Array(1)) !== null) return;
    return sha256Hex(bytes) === sha256 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A tool result's images copied from one session's images folder to another's (a forked
 * session), each only when it is still the one recorded; any other is given back unchanged,
 * to be left out with a note when the copy is read.
 */
export function copyImages(refs: unknown, fromDir: string, toDir: string): unknown {
  if (!Array.isArray(refs)) return refs;
  const { images } = sessionImages(refs, fromDir);
  const to = imagesDir(toDir);
  return refs.map((ref) => {
    const ok = images.find((r) => r.path === (ref as Partial<ImageRef>)?.path);
    const bytes = ok && readChecked(ok.path, ok.sha256!);
    if (!ok || !bytes) return ref;
    const path = fileFor(to, ok.mime_type, ok.sha256!);
    try {
      privateDir(to);
      keep(path, bytes, ok.sha256!);
    } catch {
      return ref;
    }
    return { ...ok, path };
  });
}

/** An image's bytes as base64, or the note the model reads when it is left out. */
function base64Of(ref: ImageRef): { data: string } | { note: string } {
  const bytes = readChecked(ref.path, ref.sha256 ?? "");
  if (!bytes) return { note: leftOut(ref, "is gone or changed since it was recorded") };
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return { data: btoa(raw) };
}

/**
 * Anthropic `image` blocks for a tool result's images (inside its `tool_result`); a `text`
 * block with a note for each left out.
 */
export function anthropicImageBlocks(refs: readonly ImageRef[] = []): Record<string, unknown>[] {
  return refs.map((ref) => {
    const got = base64Of(ref);
    return "note" in got
      ? { type: "text", text: got.note }
      : { type: "image", source: { type: "base64", media_type: ref.mime_type, data: got.data } };
  });
}

/** An OpenAI user message's content part: an image (a data URL) or a note. */
export type OpenAIImagePart =
  | { type: "image_url"; image_url: { url: string } }
  | { type: "text"; text: string };

/** OpenAI `image_url` content parts (data URLs) for tool results' images; a note for each left out. */
export function openaiImageParts(refs: readonly ImageRef[] = []): OpenAIImagePart[] {
  return refs.map((ref) => {
    const got = base64Of(ref);
    return "note" in got ? { type: "text" as const, text: got.note } : {
      type: "image_url" as const,
      image_url: { url: `data:${ref.mime_type};base64,${got.data}` },
    };
  });
}
