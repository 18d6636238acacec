/**
 * `edit`: replaces an exact string in a file. `old_string` must occur once unless
 * `replace_all`; not found and ambiguous are error results telling the model how to fix the
 * call. Line endings (CRLF stays CRLF), a UTF-8 BOM and the file's mode are kept; the write
 * is atomic (temp file + rename), so the file is old or new, never partial. said is one
 * short line; shown is a unified diff.
 *
 * @module
 */
import { type Builtin, type BuiltinContext, type BuiltinResult, closedObject } from "./builtin.ts";
import {
  allowed,
  countLines,
  DEFAULT_WRITE_BYTES,
  diffPackage,
  failure,
  looksBinary,
  overCap,
  refused,
  utf8Length,
} from "./_files.ts";
import { NotRegularFile, readChecked, writeChecked } from "./_race_free.ts";

/** Lines of context around each change in shown. */
const CONTEXT = 3;
/** The changed span (characters) past which shown gives no diff. */
const MAX_DIFF_CHARS = 4 * 1024 * 1024;
/** Line numbers listed for an ambiguous old_string. */
const MAX_LISTED = 10;

/** The `edit` builtin. */
export const edit: Builtin = {
  name: "edit",
  description:
    "Replace old_string with new_string in a file; old_string must match exactly once unless replace_all.\n" +
    "edit <path> [--all] < JSON {old_string, new_string} on stdin",
  parameters: closedObject(
    {
      path: { type: "string" },
      old_string: {
        type: "string",
        description: "Exact text (without read's line numbers), enough to be unique",
      },
      new_string: { type: "string" },
      replace_all: { type: "boolean", description: "Replace every match" },
    },
    ["path", "old_string", "new_string"],
    {
      argv: [{ field: "path" }, { flag: "--all", when_field: "replace_all" }],
      stdin: { mode: "json", fields: ["old_string", "new_string"] },
    },
  ),
  run: (args, ctx) => editBuiltin(args, ctx),
};

function error(said: string): BuiltinResult {
  return { said: said + "\n", isError: true };
}

async function editBuiltin(
  args: Record<string, unknown>,
  ctx: BuiltinContext,
): Promise<BuiltinResult> {
  const path = String(args.path);
  const tooBig = overCap("edit", path, String(args.new_string ?? ""), ctx) ??
    overCap("edit", path, String(args.old_string ?? ""), ctx);
  if (tooBig) return tooBig;
  const checked = allowed(path, ctx, "edit");
  if (refused(checked)) return checked;
  let bytes: Uint8Array;
  let mode: number;
  try {
    // Opened verified (a folder swapped for a symlink meanwhile is caught): _race_free.ts.
    const read = readChecked(checked.real, ctx.roots);
    if (!read) return error(`Cannot edit "${path}": not a regular file`);
    ({ bytes, mode } = read);
  } catch (e) {
    if (e instanceof NotRegularFile) return error(`Cannot edit "${path}": not a regular file`);
    if (e instanceof Deno.errors.NotFound) {
      return error(`Cannot edit "${path}": no such file; use write to create it`);
    }
    return failure("edit", path, e);
  }
  if (looksBinary(bytes)) return error(`Cannot edit "${path}": it is a binary file`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return error(`Cannot edit "${path}": it is not valid UTF-8 text`);
  }
  const bom = text.startsWith("\ufeff") ? "\ufeff" : "";
  if (bom) text = text.slice(1);
  const crlf = text.includes("\r\n") && !/(^|[^\r])\n/.test(text);
  const work = crlf ? text.replaceAll("\r\n", "\n") : text;
  const lf = (s: unknown) => crlf ? String(s).replaceAll("\r\n", "\n") : String(s);
  let oldString = lf(args.old_string);
  let newString = lf(args.new_string);
  if (oldString === "") return error("old_string is empty; to write a whole file, use write");
  if (oldString === newString) {
    return error("old_string and new_string are the same; nothing to do");
  }

  const find = (needle: string) => {
    const found: number[] = [];
    for (let at = work.indexOf(needle); at !== -1; at = work.indexOf(needle, at + needle.length)) {
      found.push(at);
      if (!args.replace_all && found.length > MAX_LISTED) break;
    }
    return found;
  };
  let matches = find(oldString);
  // A file with mixed line endings: the model sends LF; try the lines as CRLF.
  if (matches.length === 0 && !crlf && oldString.includes("\n") && work.includes("\r\n")) {
    const asCrlf = find(oldString.replaceAll("\n", "\r\n"));
    if (asCrlf.length > 0) {
      matches = asCrlf;
      oldString = oldString.replaceAll("\n", "\r\n");
      newString = newString.replaceAll("\n", "\r\n");
    }
  }
  if (matches.length === 0) return error(notFound(path, work, oldString));
  if (matches.length > 1 && args.replace_all !== true) {
    return error(ambiguous(path, work, matches));
  }
  const pieces: string[] = [];
  let from = 0;
  for (const at of matches) {
    pieces.push(work.slice(from, at), newString);
    from = at + oldString.length;
  }
  pieces.push(work.slice(from));
  const changed = pieces.join("");
  const out = bom + (crlf ? changed.replaceAll("\n", "\r\n") : changed);
  // replace_all can bring more than the cap from a short new_string; a file already larger
  // than the cap may still be edited.
  const cap = ctx.writeBytes ?? DEFAULT_WRITE_BYTES;
  const added = utf8Length(newString) * matches.length;
  if (added > cap) {
    return error(
      `Cannot edit "${path}": the replacements add ${added} bytes, over the limit of ${cap} ` +
        "bytes (config key `limits.write_bytes`)",
    );
  }
  try {
    writeChecked(checked.real, ctx.roots, new TextEncoder().encode(out), mode);
  } catch (e) {
    return failure("edit", path, e);
  }
  const first = matches[0];
  const lastEnd = matches[matches.length - 1] + oldString.length;
  const diff = await windowDiff(path, work, changed, first, lastEnd);
  const count = matches.length > 1 ? ` (${matches.length} replacements)` : "";
  const said = `patched ${path}: +${diff.added} \u2212${diff.removed}${count}\n`;
  return { said, shown: said + diff.text };
}

function lineOf(text: string, at: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function notFound(path: string, text: string, old: string): string {
  let hint = "copy the text exactly as read shows it (whitespace and indentation count), " +
    "without the line-number prefix";
  const firstLine = old.split("\n").find((l) => l.trim() !== "")?.trim();
  if (firstLine) {
    const at = text.indexOf(firstLine);
    if (at !== -1) {
      hint = `its first line occurs at line ${lineOf(text, at)} but the rest differs; ` +
        "read that part of the file again and " + hint;
    }
  }
  return `old_string was not found in "${path}"; ${hint}`;
}

function ambiguous(path: string, text: string, matches: number[]): string {
  const many = matches.length > MAX_LISTED;
  const lines = matches.slice(0, MAX_LISTED).map((m) => lineOf(text, m));
  const count = many ? `more than ${MAX_LISTED}` : `${matches.length}`;
  return `old_string occurs ${count} times in "${path}" (at lines ${lines.join(", ")}${
    many ? ", …" : ""
  }); include more surrounding lines so it matches once, or set replace_all to change every one`;
}

function startBack(text: string, at: number, n: number): number {
  let start = at <= 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
  for (let i = 0; i < n && start > 0; i++) {
    start = start < 2 ? 0 : text.lastIndexOf("\n", start - 2) + 1;
  }
  return start;
}

function endForward(text: string, at: number, n: number): number {
  const next = (p: number) => {
    const i = text.indexOf("\n", p);
    return i === -1 ? text.length : i + 1;
  };
  let end = at > 0 && text[at - 1] === "\n" ? at : next(at);
  for (let i = 0; i < n && end < text.length; i++) end = next(end);
  return end;
}

/** A unified diff of the changed region only, so a big file is not diffed whole. */
async function windowDiff(
  name: string,
  before: string,
  after: string,
  first: number,
  lastEnd: number,
): Promise<{ text: string; added: number; removed: number }> {
  const start = startBack(before, first, CONTEXT);
  const end = endForward(before, lastEnd, CONTEXT);
  const delta = after.length - before.length;
  const oldPart = before.slice(start, end);
  const newPart = after.slice(start, end + delta);
  if (oldPart.length + newPart.length > MAX_DIFF_CHARS) {
    const text = "(the change is too large to show as a diff)\n";
    return { text, added: countLines(newPart), removed: countLines(oldPart) };
  }
  const { formatPatch, structuredPatch } = await diffPackage();
  const patch = structuredPatch(name, name, oldPart, newPart, "", "", { context: CONTEXT });
  const offset = lineOf(before, start) - 1;
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    hunk.oldStart += offset;
    hunk.newStart += offset;
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
  }
  const text = formatPatch(patch, {
    includeIndex: false,
    includeUnderline: false,
    includeFileHeaders: true,
  });
  return { text, added, removed };
}
