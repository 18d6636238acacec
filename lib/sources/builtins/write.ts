/**
 * `write`: a file's whole content, written atomically (temp file + rename), parent folders
 * created, the file's mode kept. said is one short line; shown is a diff against the old
 * content.
 *
 * @module
 */
import { dirname } from "node:path";
import { type Builtin, type BuiltinContext, type BuiltinResult, closedObject } from "./builtin.ts";
import { allowed, countLines, failure, overCap, refused, unifiedDiff } from "./_files.ts";
import { mkdirChecked, NotRegularFile, openChecked, writeChecked } from "./_race_free.ts";

/** Old content larger than this (bytes) is not diffed for shown. */
const MAX_DIFF_BYTES = 4 * 1024 * 1024;

/** The `write` builtin. */
export const write: Builtin = {
  name: "write",
  description: "Create or overwrite a file with the content (stdin); makes missing folders.\n" +
    "write <path> < content on stdin",
  parameters: closedObject(
    {
      path: { type: "string" },
      content: { type: "string", description: "The whole new file (use edit to change a part)" },
    },
    ["path", "content"],
    { argv: [{ field: "path" }], stdin: { mode: "field", field: "content" } },
  ),
  run: (args, ctx) => writeBuiltin(String(args.path), String(args.content ?? ""), ctx),
};

async function writeBuiltin(
  path: string,
  content: string,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  const tooBig = overCap("write", path, content, ctx);
  if (tooBig) return tooBig;
  const checked = allowed(path, ctx, "write");
  if (refused(checked)) return checked;
  const real = checked.real;
  let mode = 0o644;
  let before: string | undefined;
  let existed = false;
  try {
    using opened = openExisting(real, ctx.roots);
    const info = opened.info;
    if (info.isDirectory) {
      return { said: `Cannot write "${path}": it is a directory\n`, isError: true };
    }
    if (!info.isFile) {
      // Renaming a temp file over a device, pipe or socket would replace it (/dev/null
      // becoming a plain file breaks every program on the machine).
      return {
        said: `Cannot write "${path}": not a regular file (a device, pipe or socket)\n`,
        isError: true,
      };
    }
    existed = true;
    mode = info.mode ?? mode;
    if (info.size <= MAX_DIFF_BYTES) before = readAll(opened.file, info.size);
  } catch (error) {
    if (error instanceof NotRegularFile) {
      // openChecked refuses a device, pipe or socket without opening it: renaming a temp
      // file over one would replace it (/dev/null becoming a plain file breaks every program).
      return {
        said: `Cannot write "${path}": not a regular file (a device, pipe or socket)\n`,
        isError: true,
      };
    }
    if (!(error instanceof Deno.errors.NotFound)) return failure("write", path, error);
  }
  try {
    mkdirChecked(dirname(real), ctx.roots);
    writeChecked(real, ctx.roots, new TextEncoder().encode(content), mode);
  } catch (error) {
    return failure("write", path, error);
  }
  const lines = countLines(content);
  const said = `wrote ${lines} line${lines === 1 ? "" : "s"} to ${path}${
    existed ? "" : " (new file)"
  }\n`;
  if (before === undefined && existed) return { said, shown: said };
  if (before === content) return { said, shown: said.replace(/\n$/, " (unchanged)\n") };
  const diff = await unifiedDiff(path, before ?? "", content, !existed);
  return { said, shown: said + diff.text };
}

/** The existing file, opened verified (see _race_free.ts); disposing closes it. */
function openExisting(real: string, roots: readonly string[]) {
  const opened = openChecked(real, roots);
  return { ...opened, [Symbol.dispose]: () => opened.file.close() };
}

/** Up to `size` bytes of an open file, as UTF-8 text. */
function readAll(file: Deno.FsFile, size: number): string {
  const bytes = new Uint8Array(size);
  let at = 0;
  while (at < size) {
    const n = file.readSync(bytes.subarray(at));
    if (n === null) break;
    at += n;
  }
  return new TextDecoder().decode(bytes.subarray(0, at));
}
