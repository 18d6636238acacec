/**
 * What a call gives besides text (SPEC S2, S9): attachments (MCP image, audio and embedded
 * resource blocks) and a structured result (MCP `structuredContent`), masked like every byte
 * that leaves magi and capped: attachments at {@link MAX_ATTACHMENT_BYTES} per call (the rest
 * are dropped; said already names the file holding each), a structured result at said's limit
 * (a larger one is dropped with a note in said, whose text carries the result).
 *
 * @module
 */
import type { Masker } from "./mask.ts";
import type { Attachment } from "../core/types.ts";

/** The most base64 bytes of attachments one call keeps. */
export const MAX_ATTACHMENT_BYTES = 8 * 1024 * 1024;

/**
 * Every string in `value` masked (object keys too), but base64 that stands for bytes — the
 * `data` of an MCP image or audio block, the `blob` of a resource's contents — is masked as
 * the bytes it holds ({@link maskedBinary}), never as text: text masking would cut `$NAME`
 * into the base64 and break the whole image, where the bytes of a secret are what leaks.
 * Text, resource text and structured content are masked as text.
 */
export function maskedJson(value: unknown, masker: Masker): unknown {
  if (typeof value === "string") return masker.maskText(value);
  if (Array.isArray(value)) return value.map((v) => maskedJson(v, masker));
  if (typeof value === "object" && value !== null) {
    const binary = binaryField(value as Record<string, unknown>);
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        masker.maskText(k),
        k === binary ? maskedBinary(v as string, masker) : maskedJson(v, masker),
      ]),
    );
  }
  return value;
}

/** The field of `o` that holds base64 bytes: an image or audio block's, a resource's blob. */
function binaryField(o: Record<string, unknown>): "data" | "blob" | undefined {
  if ((o.type === "image" || o.type === "audio") && typeof o.data === "string") return "data";
  if (typeof o.blob === "string" && typeof o.uri === "string") return "blob";
  return undefined;
}

/**
 * Base64 bytes masked as bytes: returned as they came (byte for byte) unless a secret is in
 * the bytes they decode to, which are then masked as a spill file is and encoded again (still
 * valid base64). Base64 that does not decode is no binary: it is masked as text.
 */
export function maskedBinary(data: string, masker: Masker): string {
  return maskedBase64(data, masker) ?? masker.maskText(data);
}

function decode(data: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function encode(bytes: Uint8Array): string {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(raw);
}

/** Base64 bytes masked as bytes (a secret inside a file is masked as in a spill), or null. */
function maskedBase64(data: string, masker: Masker): string | null {
  const bytes = decode(data);
  if (!bytes) return null;
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  const masked = masker.maskBytes(raw);
  if (masked === raw) return data;
  return encode(Uint8Array.from(masked, (c) => c.charCodeAt(0)));
}

/** Collects one call's attachments and structured result. */
export class Extras {
  readonly attachments: Attachment[] = [];
  structured: Record<string, unknown> | undefined;
  /** Why the structured result was dropped, for said. */
  dropped: string | undefined;
  #bytes = 0;

  constructor(private readonly masker: Masker, private readonly structuredLimit: number) {}

  /** Keeps `a` masked, unless it is malformed or over the call's cap. */
  attach(a: Attachment): void {
    let block = { ...a.block } as Record<string, unknown>;
    if (a.block.type === "resource_link") {
      block = maskedJson(block, this.masker) as Record<string, unknown>;
    } else if (a.block.type === "resource") {
      const resource = { ...(block.resource as Record<string, unknown>) };
      if (typeof resource.text === "string") resource.text = this.masker.maskText(resource.text);
      if (typeof resource.blob === "string") {
        const blob = maskedBase64(resource.blob, this.masker);
        if (blob === null) return;
        resource.blob = blob;
      }
      if (typeof resource.uri === "string") resource.uri = this.masker.maskText(resource.uri);
      block.resource = resource;
    } else {
      if (typeof block.data !== "string") return;
      const data = maskedBase64(block.data, this.masker);
      if (data === null) return;
      block.data = data;
    }
    const size = JSON.stringify(block).length;
    if (this.#bytes + size > MAX_ATTACHMENT_BYTES) return;
    this.#bytes += size;
    this.attachments.push({ ...a, block: block as Attachment["block"] });
  }

  /** Keeps the structured result masked, unless its JSON is over the limit. */
  setStructured(value: Record<string, unknown>): void {
    const masked = maskedJson(value, this.masker) as Record<string, unknown>;
    const size = new TextEncoder().encode(JSON.stringify(masked)).length;
    if (size > this.structuredLimit) {
      this.structured = undefined;
      this.dropped =
        `[magi: the structured result (${size} bytes) is over ${this.structuredLimit} ` +
        "bytes (limits.said_bytes) and was left out]";
      return;
    }
    this.structured = masked;
  }
}
