/**
 * Spill files: the whole (masked) output of a call whose kept text was cut, written as it
 * streams so memory stays bounded.
 *
 * @module
 */
import { join } from "node:path";
import { fromByteString } from "./bytes.ts";
import { privateDirAsync } from "../output/private.ts";

/** Spill files older than this (milliseconds) are removed when a new one is made. */
export const SPILL_KEEP_MS = 7 * 24 * 3600 * 1000;
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
 * Collects a stream in memory up to `thresholdBytes`; past that, writes everything to a new
 * file in `dir` (created with mode 0700; the file gets 0600) and keeps writing there.
 */
export class Spill {
  #pending: string[] = [];
  #pendingBytes = 0;
  #file: Deno.FsFile | undefined;
  #path: string | undefined;
  #failed = false;
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
  ) {}

  /** Takes the next masked chunk (a byte string). */
  async push(chunk: string): Promise<void> {
    if (this.#failed || chunk.length === 0) return;
    if (this.#file) return await this.#write(chunk);
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
      for (const chunk of pending) await this.#write(chunk);
    } catch {
      this.#failed = true;
      this.#pending = [];
      this.#path = undefined;
    }
  }

  async #write(chunk: string): Promise<void> {
    if (chunk.length > this.#buffer.length) this.#buffer = new Uint8Array(chunk.length);
    const bytes = fromByteString(chunk, this.#buffer);
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
    this.#file?.close();
    this.#file = undefined;
    this.#pending = [];
    return this.#failed ? null : this.#path ?? null;
  }
}
