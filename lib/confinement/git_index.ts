/**
 * The gitlinks (submodules) a repository's index names, read from the index file itself (format
 * versions 2, 3 and 4, SHA-1 or SHA-256), without running git.
 *
 * @module
 */
import { join } from "node:path";
import { gitEntriesOf } from "./git_programs.ts";

/** How large an index {@link gitlinksOf} reads (larger ones: read as far as this). */
const INDEX_LIMIT = 64 * 1024 * 1024;

/**
 * The paths of the gitlinks (submodules: mode 160000) in git dir `g`'s index, as relative
 * paths; [] when there is none or the index cannot be read (index versions 2, 3 and 4).
 */
export function gitlinksOf(g: string): string[] {
  let data: Uint8Array;
  try {
    data = Deno.readFileSync(join(g, "index"));
  } catch {
    return [];
  }
  if (data.length > INDEX_LIMIT) data = data.subarray(0, INDEX_LIMIT);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 12 || new TextDecoder().decode(data.subarray(0, 4)) !== "DIRC") return [];
  const version = view.getUint32(4);
  const count = view.getUint32(8);
  if (version < 2 || version > 4) return [];
  const sha256 = gitEntriesOf(join(g, "config")).some((e) =>
    e.key.toLowerCase() === "extensions.objectformat" && e.value?.trim() === "sha256"
  );
  const hash = sha256 ? 32 : 20;
  const out: string[] = [];
  const decoder = new TextDecoder();
  let at = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + 40 + hash + 2 > data.length) break;
    const mode = view.getUint32(at + 24);
    at += 40 + hash;
    const flags = view.getUint16(at);
    at += 2;
    if (version >= 3 && flags & 0x4000) at += 2;
    let name: Uint8Array;
    if (version === 4) {
      // A varint of how many bytes to take off the previous name, then the rest, NUL-ended.
      let strip = 0;
      let b = data[at++];
      strip = b & 0x7f;
      while (b & 0x80) {
        b = data[at++];
        strip = ((strip + 1) << 7) | (b & 0x7f);
      }
      const end = data.indexOf(0, at);
      if (end < 0) break;
      const kept = previous.subarray(0, Math.max(0, previous.length - strip));
      name = new Uint8Array(kept.length + end - at);
      name.set(kept);
      name.set(data.subarray(at, end), kept.length);
      at = end + 1;
    } else {
      const end = data.indexOf(0, at);
      if (end < 0) break;
      name = data.subarray(at, end);
      // Padded with NULs to a multiple of eight bytes from the entry's start.
      at = start + ((end - start + 8) & ~7);
    }
    previous = name;
    if ((mode & 0o170000) === 0o160000) out.push(decoder.decode(name));
  }
  return out.filter((p) => p && !p.split("/").some((s) => s === ".." || s === ".git"));
}
