/**
 * Spill files: the whole (masked) output of a call whose kept text was cut, written as it
 * streams so memory stays bounded — up to `limits.spill_bytes`. Past that cap the file keeps
 * the output's head and its tail (held in a bounded ring until the end), with a note between
 * them: `[magi: spill file cut: kept first X and last Y of Z bytes]`.
 *
 * @module
 */
import { join } from "node:path";
import { fromByteString } from "./bytes.ts";
import { privateDirAsync } from "../core/private.ts";

/** Spill files older than this (milliseconds) are removed when a new one is made. */
export const SPILL_KEEP_MS = 7 * 24 * 3600 * 1000;

/** The default cap of a spill file, in bytes (config `limits.spill_bytes`): 256 MiB. */
export const DEFAULT_SPILL_BYTES = 256 * 1024 * 1024;

/** The most bytes of a cut output's tail held in memory until the end: 8 MiB. */
const MAX_TAIL_BYTES = 8 * 1024 * 1024;

/** How a cut spill file was cut, in bytes. */
export interface SpillCut {
  head: number;
  tail: number;
  total: number;
}

/** The note of a cut spill file (also quoted in the kept text's note). */
export function spillCutNote({ head, tail, total }: SpillCut): string {
  return `spill file cut: kept first ${head} and last ${tail} of ${total} bytes`;
}
const pruned = new Set<string>();

/** Removes spill files (`*.out`) older than {@link SPILL_KEEP_MS} from a folder, once per process. */
async function pruneOld(dir: string): Promise<void> {
  if (pruned.has(dir)) return;
  pruned.add(dir);
  const before = Date.now() - SPILL_KEEP_MS;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".out")) continue;
      const path = join(dir, entry.name);
      const info = await Deno.stat(path);
      if ((info.mtime?.getTime() ?? Date.now()) < before) await Deno.remove(path);
    }
  } catch {
    // Pruning is housekeeping: a folder that cannot be read only keeps its old files.
  }
}

/**
 * Collects a stream in memory up to `thresholdBytes`; past that, writes it to a new file in
 * `dir` (created with mode 0700; the file gets 0600) and keeps writing there, up to
 * `capBytes`: then the file keeps the head (`capBytes` less the tail) and the last
 * `min(capBytes / 2, 8 MiB)` bytes, which are written at {@link close} after a note.
 */
export class Spill {
  #pending: string[] = [];
  #pendingBytes = 0;
  #file: Deno.FsFile | undefined;
  #path: string | undefined;
  #failed = false;
  /** Bytes taken in all, and bytes of the head written to the file. */
  #total = 0;
  #headWritten = 0;
  readonly #headBytes: number;
  readonly #tailBytes: number;
  /**
   * The tail past the head: a ring of `#tailBytes` bytes (made when first needed), holding
   * copies — a kept slice of a string would keep its whole parent alive.
   */
  #ring: Uint8Array | undefined;
  /** Bytes ever put in the ring; the next byte goes to `#ringTaken % #tailBytes`. */
  #ringTaken = 0;
  #cut: SpillCut | undefined;
  /** Reused for every write, so a long stream makes no garbage here. */
  #buffer = new Uint8Array(1 << 16);

  /**
   * @param dir the spill folder (absolute)
   * @param label a short name for the file, such as the tool's name
   * @param thresholdBytes the size past which the stream is written to a file
   */
  constructor(
    private readonly dir: string,
    private readonly label: string,
    private readonly thresholdBytes: number,
    capBytes: number = DEFAULT_SPILL_BYTES,
  ) {
    this.#tailBytes = Math.min(Math.floor(capBytes / 2), MAX_TAIL_BYTES);
    this.#headBytes = capBytes - this.#tailBytes;
  }

  /** How the file was cut, once {@link close} cut it; else undefined. */
  get cut(): SpillCut | undefined {
    return this.#cut;
  }

  /** Takes the next masked chunk (a byte string). */
  async push(chunk: string): Promise<void> {
    if (this.#failed || chunk.length === 0) return;
    if (this.#file) return await this.#take(chunk);
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    if (this.#pendingBytes > this.thresholdBytes) await this.#open();
  }

  async #open(): Promise<void> {
    try {
      await privateDirAsync(this.dir);
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const random = crypto.randomUUID().slice(0, 8);
      const safe = this.label.replace(/[^A-Za-z0-9_-]/g, "_");
      this.#path = join(this.dir, `${stamp}-${safe}-${random}.out`);
      this.#file = await Deno.open(this.#path, { write: true, createNew: true, mode: 0o600 });
      await pruneOld(this.dir);
      const pending = this.#pending;
      this.#pending = [];
      this.#pendingBytes = 0;
      for (const chunk of pending) await this.#take(chunk);
    } catch {
      this.#failed = true;
      this.#pending = [];
      this.#path = undefined;
    }
  }

  /** Writes a chunk to the head while there is room, and keeps the rest in the tail. */
  async #take(chunk: string): Promise<void> {
    this.#total += chunk.length;
    const room = this.#headBytes - this.#headWritten;
    if (room > 0) {
      const head = chunk.length <= room ? chunk : chunk.slice(0, room);
      await this.#write(head);
      this.#headWritten += head.length;
      if (head.length === chunk.length) return;
      chunk = chunk.slice(room);
    }
    const size = this.#tailBytes;
    if (size === 0) return;
    if (chunk.length > size) {
      this.#ringTaken += chunk.length - size;
      chunk = chunk.slice(-size);
    }
    const ring = this.#ring ??= new Uint8Array(size);
    const bytes = fromByteString(chunk, this.#buffer);
    const at = this.#ringTaken % size;
    const first = Math.min(bytes.length, size - at);
    ring.set(bytes.subarray(0, first), at);
    ring.set(bytes.subarray(first), 0);
    this.#ringTaken += bytes.length;
  }

  /** Writes the kept tail, after a note when bytes were dropped before it. */
  async #finishTail(): Promise<void> {
    const rest = this.#total - this.#headWritten;
    if (rest <= 0) return;
    const size = this.#tailBytes;
    const ring = this.#ring ?? new Uint8Array(0);
    const kept = Math.min(this.#ringTaken, size);
    const at = this.#ringTaken % (size || 1);
    // Oldest first: from the write position to the end, then from the start.
    const parts = this.#ringTaken > size
      ? [ring.subarray(at), ring.subarray(0, at)]
      : [ring.subarray(0, kept)];
    this.#ring = undefined;
    if (kept < rest) {
      this.#cut = { head: this.#headWritten, tail: kept, total: this.#total };
      await this.#write(`\n[magi: ${spillCutNote(this.#cut)}]\n`);
    }
    for (const part of parts) await this.#writeBytes(part);
  }

  async #write(chunk: string): Promise<void> {
    if (chunk.length > this.#buffer.length) this.#buffer = new Uint8Array(chunk.length);
    await this.#writeBytes(fromByteString(chunk, this.#buffer));
  }

  async #writeBytes(bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.length) written += await this.#file!.write(bytes.subarray(written));
  }

  /**
   * Ends the stream.
   *
   * @param needed whether the kept text was cut, so the whole output must be in a file even
   *   when it stayed under the threshold
   * @returns the spill file's absolute path, or null when none was written
   */
  async close(needed: boolean): Promise<string | null> {
    if (needed && !this.#file && !this.#failed) await this.#open();
    if (this.#file && !this.#failed) {
      try {
        await this.#finishTail();
      } catch {
        this.#failed = true;
      }
    }
    this.#file?.close();
    this.#file = undefined;
    this.#pending = [];
    return this.#failed ? null : this.#path ?? null;
  }
}
