/**
 * `read`: a file's lines with line numbers, a range of a file of any size without loading
 * all of it; binary files described instead of dumped; a directory as a short listing.
 *
 * @module
 */
import { resolve } from "node:path";
import type { Builtin, BuiltinResult } from "../lib/registry/builtins.ts";

/** Lines returned when the call gives no limit. */
const DEFAULT_LIMIT = 2000;
const CHUNK = 65536;

/** The `read` builtin. */
export const read: Builtin = {
  name: "read",
  description: "Read a text file's lines with line numbers, or list a directory.\n" +
    "read <path> [--offset N] [--limit N]",
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "File or directory; relative to the working directory" },
      offset: { type: "integer", minimum: 1, description: "First line to read (1-based)" },
      limit: {
        type: "integer",
        minimum: 1,
        description: `Lines to read (default ${DEFAULT_LIMIT})`,
      },
    },
    required: ["path"],
    additionalProperties: false,
    "x-magi": {
      argv: [{ field: "path" }, { flag: "--offset", field: "offset" }, {
        flag: "--limit",
        field: "limit",
      }],
      stdin: { mode: "none" },
    },
  },
  async run(args, ctx): Promise<BuiltinResult> {
    const path = resolve(ctx.cwd, String(args.path));
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (error) {
      return { said: `Cannot read "${args.path}": ${describe(error)}`, isError: true };
    }
    if (info.isDirectory) return { said: await listDirectory(path) };
    const offset = typeof args.offset === "number" ? args.offset : 1;
    const limit = typeof args.limit === "number" ? args.limit : DEFAULT_LIMIT;
    return await readLines(path, info.size, offset, limit);
  },
};

function describe(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file or directory";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  return error instanceof Error ? error.message : String(error);
}

async function listDirectory(path: string): Promise<string> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(path)) {
    names.push(entry.isDirectory ? entry.name + "/" : entry.name);
  }
  names.sort();
  return names.length === 0 ? "(empty directory)\n" : names.join("\n") + "\n";
}

async function readLines(
  path: string,
  size: number,
  offset: number,
  limit: number,
): Promise<BuiltinResult> {
  using file = await Deno.open(path);
  const buf = new Uint8Array(CHUNK);
  const decoder = new TextDecoder();
  let line = 1;
  let partial = "";
  const out: string[] = [];
  let first = true;
  let more = false;
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const bytes = buf.subarray(0, n);
    if (first && bytes.subarray(0, 8192).includes(0)) {
      return { said: `"${path}" is a binary file (${size} bytes); not shown\n` };
    }
    first = false;
    const text = partial + decoder.decode(bytes, { stream: true });
    const pieces = text.split("\n");
    partial = pieces.pop()!;
    for (const piece of pieces) {
      if (line >= offset) {
        if (out.length >= limit) {
          more = true;
          break;
        }
        out.push(`${line}\t${piece.replace(/\r$/, "")}`);
      }
      line++;
    }
    if (more) break;
    if (line < offset) partial = partial.length > CHUNK * 16 ? "" : partial;
  }
  if (!more && partial !== "" && line >= offset && out.length < limit) {
    out.push(`${line}\t${partial}`);
  } else if (!more && partial !== "" && out.length >= limit) more = true;
  if (out.length === 0) {
    return {
      said: offset > 1 ? `(no lines from line ${offset}; the file has fewer)\n` : "(empty file)\n",
    };
  }
  const last = offset + out.length - 1;
  const tail = more ? `(lines ${offset}-${last}; more follow: read with offset ${last + 1})\n` : "";
  return { said: out.join("\n") + "\n" + tail };
}
