/**
 * Byte buffers put together and read whole: one copy of the loops a stream reader, a socket
 * peek and a file read each need.
 *
 * @example
 * ```ts
 * import { concatBytes } from "./bytes.ts";
 * concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])], 3); // Uint8Array [1, 2, 3]
 * ```
 *
 * @module
 */

/**
 * The chunks one after another in a new buffer.
 *
 * @param size the chunks' total length in bytes (the caller has counted it)
 */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Reads from `file` until `into` is full or the file ends.
 *
 * @returns how many bytes were read (less than `into.length` where the file ended first)
 */
export function readFullSync(file: Deno.FsFile, into: Uint8Array): number {
  let at = 0;
  while (at < into.length) {
    const n = file.readSync(into.subarray(at));
    if (n === null) break;
    at += n;
  }
  return at;
}
