/**
 * An MCP tool result as magi output (SPEC S2, S9): text content goes to said; image, audio
 * and binary resource content is described in said (type, size and a file holding the
 * bytes, masked like every spill) instead of being dropped or inlined as base64; content
 * whose `annotations.audience` is only `["user"]` goes to shown, only `["assistant"]` to
 * said alone. Every block but text is also attached (`Emit.attach`: passed on to MCP clients,
 * images to providers), and structured content is passed on (`Emit.structured`); a result
 * with no content blocks is said as the structured content's JSON, its base64 left out.
 *
 * @module
 */
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fromByteString, toByteString } from "../../pipeline/bytes.ts";
import type { Masker } from "../../pipeline/mask.ts";
import { SPILL_KEEP_MS } from "../../pipeline/spill.ts";
import { privateDir } from "../../core/private.ts";
import type { Attachment, Emit } from "../../core/types.ts";

/** Where binary content goes. */
export interface ContentFiles {
  /** The spill folder (absolute). */
  spillDir: string;
  masker: Masker;
  /** A short name for the files, such as the tool's name. */
  label: string;
}

type Block = CallToolResult["content"][number];

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "application/pdf": "pdf",
  "application/json": "json",
  "application/zip": "zip",
  "application/gzip": "gz",
};

/** Decodes base64 (tolerating whitespace); null when it is not base64. */
export function decodeBase64(data: string): Uint8Array | null {
  try {
    const raw = atob(data.replace(/\s+/g, ""));
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/** The names {@link spillBytes} gives: `<ISO time>-<label>-<8 hex>.<extension>`. */
const SPILLED = new RegExp(
  `^\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z-[A-Za-z0-9_-]*-[0-9a-f]{8}\\.(?:${
    [...new Set([...Object.values(EXTENSIONS), "bin"])].join("|")
  })$`,
);
const pruned = new Set<string>();

/**
 * Removes the binary spills of MCP content older than `SPILL_KEEP_MS` (as the pipeline does
 * for its own spills), once per process and folder.
 */
export async function pruneSpilledBytes(dir: string, now = Date.now()): Promise<void> {
  if (pruned.has(dir)) return;
  pruned.add(dir);
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !SPILLED.test(entry.name)) continue;
      const path = join(dir, entry.name);
      const info = await Deno.lstat(path);
      if ((info.mtime?.getTime() ?? now) < now - SPILL_KEEP_MS) await Deno.remove(path);
    }
  } catch {
    // Housekeeping: a folder that cannot be read only keeps its old files.
  }
}

/**
 * Writes bytes to a new file in the spill folder (0600 in a 0700 folder), masked first.
 *
 * @returns the file's absolute path, or null when it could not be written
 */
export async function spillBytes(
  files: ContentFiles,
  bytes: Uint8Array,
  mimeType: string | undefined,
): Promise<string | null> {
  try {
    privateDir(files.spillDir);
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const random = crypto.randomUUID().slice(0, 8);
    const safe = files.label.replace(/[^A-Za-z0-9_-]/g, "_");
    const ext = EXTENSIONS[mimeType ?? ""] ?? "bin";
    const path = join(files.spillDir, `${stamp}-${safe}-${random}.${ext}`);
    const masked = fromByteString(files.masker.maskBytes(toByteString(bytes)));
    await Deno.writeFile(path, masked, { createNew: true, mode: 0o600 });
    await Deno.chmod(path, 0o600);
    await pruneSpilledBytes(files.spillDir);
    return path;
  } catch {
    return null;
  }
}

/** Bytes described for said, and the file holding them (when they could be saved). */
interface Described {
  text: string;
  path?: string;
}

async function describeBytes(
  kind: string,
  data: string,
  mimeType: string | undefined,
  files: ContentFiles,
  extra = "",
): Promise<Described> {
  const bytes = decodeBase64(data);
  const type = mimeType ?? "of unknown type";
  if (!bytes) return { text: `[${kind} ${type}${extra}: not valid base64, not kept]\n` };
  const path = await spillBytes(files, bytes, mimeType);
  const where = path ? `saved to ${path}` : "could not be saved";
  return {
    text: `[${kind} ${type}${extra}, ${bytes.length} bytes, ${where}]\n`,
    path: path ?? undefined,
  };
}

/** One content block as text for said (or shown). */
export async function describeBlock(block: Block, files: ContentFiles): Promise<string> {
  return (await described(block, files)).text;
}

async function described(block: Block, files: ContentFiles): Promise<Described> {
  switch (block.type) {
    case "text":
      return { text: block.text };
    case "image":
      return await describeBytes("image", block.data, block.mimeType, files);
    case "audio":
      return await describeBytes("audio", block.data, block.mimeType, files);
    case "resource": {
      const r = block.resource;
      const at = ` ${r.uri}`;
      if ("text" in r && typeof r.text === "string") {
        const type = r.mimeType ? ` (${r.mimeType})` : "";
        const size = new TextEncoder().encode(r.text).length;
        return {
          text: `[resource${at}${type}, ${size} bytes:]\n${r.text}${
            r.text.endsWith("\n") ? "" : "\n"
          }`,
        };
      }
      if ("blob" in r && typeof r.blob === "string") {
        return await describeBytes("resource", r.blob, r.mimeType, files, at);
      }
      return { text: `[resource${at}]\n` };
    }
    case "resource_link": {
      const parts = [block.name, block.mimeType, block.description].filter(Boolean);
      return {
        text: `[resource link ${block.uri}${parts.length ? ": " + parts.join(", ") : ""}]\n`,
      };
    }
    default:
      return { text: `[content of type "${(block as { type: string }).type}", not shown]\n` };
  }
}

/** Base64 of at least this many characters in a structured result is replaced for said. */
const BASE64_RUN = 256;

/**
 * A structured result as JSON for said, with every long base64 string replaced by
 * `[N bytes of base64, left out]`: said never carries base64.
 */
export function structuredForSaid(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (typeof v !== "string" || v.length < BASE64_RUN) return v;
    if (!/^[A-Za-z0-9+/=\s]+$/.test(v)) return v;
    return `[${Math.floor(v.replace(/\s+/g, "").length * 3 / 4)} bytes of base64, left out]`;
  });
}

function audience(block: Block): string[] | undefined {
  const a = (block as { annotations?: { audience?: unknown } }).annotations?.audience;
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === "string") : undefined;
}

/**
 * Emits an MCP result's content: for the model through `said`, and — only when some block
 * is meant for the user alone — what the person sees through `shown`.
 */
export async function emitContent(
  result: CallToolResult,
  emit: Emit,
  files: ContentFiles,
): Promise<void> {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const userOnly = (b: Block) => {
    const a = audience(b);
    return a !== undefined && a.includes("user") && !a.includes("assistant");
  };
  const splits = blocks.some(userOnly);
  let last = "\n";
  for (const block of blocks) {
    const a = audience(block);
    const forModel = a === undefined || a.length === 0 || a.includes("assistant");
    const forPerson = a === undefined || a.length === 0 || a.includes("user");
    const { text, path } = await described(block, files);
    if (block.type !== "text") {
      emit.attach?.({
        block: block as Attachment["block"],
        ...("mimeType" in block && typeof block.mimeType === "string"
          ? { mimeType: block.mimeType }
          : block.type === "resource" && typeof block.resource.mimeType === "string"
          ? { mimeType: block.resource.mimeType }
          : {}),
        ...(path ? { path } : {}),
      });
    }
    if (forModel) {
      if (!last.endsWith("\n") && text !== "") await emit.said("\n");
      await emit.said(text);
      if (text !== "") last = text;
    }
    if (splits && forPerson) await emit.shown(text.endsWith("\n") ? text : text + "\n");
  }
  const structured = result.structuredContent;
  if (typeof structured === "object" && structured !== null && !Array.isArray(structured)) {
    emit.structured?.(structured as Record<string, unknown>);
    // The content carries the result; only a result with no content at all is said as JSON.
    if (blocks.length === 0) await emit.said(structuredForSaid(structured));
  }
}
