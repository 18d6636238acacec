/**
 * `write`: a file's whole content, written atomically (temp file + rename), parent folders
 * created, the file's mode kept. said is one short line; shown is a diff against the old
 * content.
 *
 * @module
 */
import { dirname } from "node:path";
import type { Builtin, BuiltinContext, BuiltinResult } from "../lib/registry/builtins.ts";
import { allowed, atomicWrite, countLines, failure, refused, unifiedDiff } from "./_files.ts";

/** Old content larger than this (bytes) is not diffed for shown. */
const MAX_DIFF_BYTES = 4 * 1024 * 1024;

/** The `write` builtin. */
export const write: Builtin = {
  name: "write",
  description: "Create or overwrite a file with the content (stdin); makes missing folders.\n" +
    "write <path> < content on stdin",
  parameters: {
    type: "object",
    properties: {
      path: { type: "string" },
      content: { type: "string", description: "The whole new file (use edit to change a part)" },
    },
    required: ["path", "content"],
    additionalProperties: false,
    "x-magi": { argv: [{ field: "path" }], stdin: { mode: "field", field: "content" } },
  },
  run: (args, ctx) => writeBuiltin(String(args.path), String(args.content ?? ""), ctx),
};

async function writeBuiltin(
  path: string,
  content: string,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  const checked = allowed(path, ctx, "write");
  if (refused(checked)) return checked;
  const real = checked.real;
  let mode = 0o644;
  let before: string | undefined;
  let existed = false;
  try {
    const info = await Deno.stat(real);
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
    if (info.size <= MAX_DIFF_BYTES) before = await Deno.readTextFile(real);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return failure("write", path, error);
  }
  try {
    await Deno.mkdir(dirname(real), { recursive: true });
    await atomicWrite(real, new TextEncoder().encode(content), mode);
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
