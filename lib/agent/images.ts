/**
 * Images from tool results to the providers that take them (OpenAI and Anthropic image
 * input). A tool result's image attachments (an MCP server's image blocks, already masked
 * and saved in the spill folder) are recorded with the tool result as references to those
 * files — never as base64 in said or the transcript — when they are of a type both APIs take
 * and within config `limits.image_bytes` (each image; 0 sends none). At each request the
 * files are read again: Anthropic gets them as `image` blocks inside the `tool_result`,
 * OpenAI Chat Completions (whose tool messages carry text only) as a user message of
 * `image_url` parts after the turn's tool messages. A file gone since is left out.
 *
 * @module
 */
import type { ToolResult } from "../pipeline/run_tool.ts";

/** An image a tool result carries: its type and the file holding its (masked) bytes. */
export interface ImageRef {
  mime_type: string;
  path: string;
}

/** The image types OpenAI and Anthropic both take. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/** The most images one tool result sends. */
export const MAX_IMAGES = 8;

/**
 * The images of `result` to send with it: those of a type the providers take, saved to a
 * file, and at most `maxBytes` each (at most {@link MAX_IMAGES}).
 */
export function imageRefs(result: ToolResult, maxBytes: number): ImageRef[] {
  if (maxBytes <= 0) return [];
  const refs: ImageRef[] = [];
  for (const a of result.attachments ?? []) {
    if (a.block.type !== "image" || !a.path || !IMAGE_TYPES.has(a.mimeType ?? "")) continue;
    try {
      if (Deno.statSync(a.path).size > maxBytes) continue;
    } catch {
      continue;
    }
    refs.push({ mime_type: a.mimeType!, path: a.path });
    if (refs.length >= MAX_IMAGES) break;
  }
  return refs;
}

/** An image's bytes as base64, or undefined when its file is gone. */
function base64Of(ref: ImageRef): string | undefined {
  try {
    const bytes = Deno.readFileSync(ref.path);
    let raw = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return btoa(raw);
  } catch {
    return undefined;
  }
}

/** Anthropic `image` blocks for a tool result's images (inside its `tool_result`). */
export function anthropicImageBlocks(refs: readonly ImageRef[] = []): Record<string, unknown>[] {
  return refs.flatMap((ref) => {
    const data = base64Of(ref);
    return data === undefined
      ? []
      : [{ type: "image", source: { type: "base64", media_type: ref.mime_type, data } }];
  });
}

/** OpenAI `image_url` content parts (data URLs) for tool results' images. */
export function openaiImageParts(
  refs: readonly ImageRef[] = [],
): { type: "image_url"; image_url: { url: string } }[] {
  return refs.flatMap((ref) => {
    const data = base64Of(ref);
    return data === undefined ? [] : [{
      type: "image_url" as const,
      image_url: { url: `data:${ref.mime_type};base64,${data}` },
    }];
  });
}
