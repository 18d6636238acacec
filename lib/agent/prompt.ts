/**
 * The system prompt: who the model works for, where it stands (working directory, date), the
 * context files — the person's `$XDG_CONFIG_HOME/magi/AGENTS.md`, then each `AGENTS.md` from
 * the git root down to the working folder, nearest last (a folder with none gives its
 * `CLAUDE.md`) — the session's temp folder (the shared one is read-only in the sandbox) and the
 * catalogue of skills. Built once per agent: the same inputs give the
 * same bytes (no clock finer than the day), so a provider's prompt cache keeps the prefix.
 *
 * @module
 */
import { projectFolders } from "../core/project_folders.ts";
import { magiDir } from "../core/xdg.ts";
import { dirname, isAbsolute, join, relative } from "node:path";
import { containedPath } from "../sources/skills/contained.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { sessionTempDir } from "../confinement/session_temp.ts";

/** The most of all context files together the prompt carries, in bytes. */
export const AGENTS_MD_MAX_BYTES = 32 * 1024;

/** One skill as the catalogue lists it (name and description only). */
export interface CatalogueEntry {
  name: string;
  description: string;
}

/** Where the prompt is built for. */
export interface PromptContext {
  cwd: string;
  env: Record<string, string>;
  now: Date;
  /** Replaces magi's opening lines (config `system_prompt` or `system_prompt_file`'s text). */
  base?: string;
  /** The skills catalogue (sorted by name by the caller). */
  skills?: readonly CatalogueEntry[];
  /** Extra text at the end (a sub-agent's profile and role). */
  extra?: string;
  /** The session's own temp folder (`sessionTempDir`), where temp files go; said when given. */
  temp?: string;
}

/** A context file the prompt carries: where, how many bytes it has, how many were kept. */
export interface ContextFile {
  path: string;
  /** Size of the file, in bytes. */
  bytes: number;
  /** Bytes of it in the prompt (less than `bytes` when cut, 0 when the budget was spent). */
  kept: number;
}

/** The prompt and what went into it (`magi context`). */
export interface Prompt {
  text: string;
  files: ContextFile[];
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Whether the folder `root` is HOME or holds it (both taken as real paths). */
function holdsHome(root: string, home: string | undefined): boolean {
  if (!home) return false;
  try {
    const rel = relative(Deno.realPathSync(root), Deno.realPathSync(home));
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  } catch {
    return false;
  }
}

/**
 * The context files for `cwd`, in prompt order: the person's own AGENTS.md, then from the git
 * root (the nearest folder above holding `.git`; without one, `cwd` alone) down to `cwd`, one
 * per folder: its `AGENTS.md`, else its `CLAUDE.md`.
 */
export function contextFiles(cwd: string, env: Record<string, string>): string[] {
  const chain = projectFolders(cwd).reverse();
  const files: string[] = [];
  const home = magiDir(env, "config");
  if (home && isFile(join(home, "AGENTS.md"))) files.push(join(home, "AGENTS.md"));
  // A checkout's file that is a link out of the checkout (to a key, say) is passed over. The
  // git root is no fence when it holds HOME (a dotfiles repository, `git init ~`): a
  // downloaded folder's `AGENTS.md -> ../../.ssh/id_ed25519` would lie "inside" it. There a
  // file must stay inside its own folder.
  const fence = (path: string) => holdsHome(chain[0], env.HOME) ? dirname(path) : chain[0];
  const own = (path: string) => {
    const real = isFile(path) ? containedPath(path, fence(path)) : undefined;
    if (real !== undefined) checkedReal.set(path, real);
    return real !== undefined;
  };
  for (const dir of chain) {
    const agents = join(dir, "AGENTS.md");
    const claude = join(dir, "CLAUDE.md");
    if (own(agents)) files.push(agents);
    else if (own(claude)) files.push(claude);
  }
  return [...new Set(files)];
}

/** The real path each checkout file had when {@link contextFiles} let it in. */
const checkedReal = new Map<string, string>();

/**
 * A context file's bytes, read from the real path it was let in with, and only when the file
 * opened is the regular file looked at there: a file a sandboxed program swaps for a link
 * after the check (to `~/.netrc`, say) is read as empty.
 */
function readChecked(path: string): Uint8Array {
  const real = checkedReal.get(path);
  if (real === undefined) return Deno.readFileSync(path); // the person's own file
  try {
    if (Deno.realPathSync(path) !== real) return new Uint8Array();
    const looked = Deno.lstatSync(real);
    if (!looked.isFile) return new Uint8Array();
    using file = Deno.openSync(real);
    const opened = file.statSync();
    if (opened.ino !== looked.ino || opened.dev !== looked.dev) return new Uint8Array();
    const bytes = new Uint8Array(Math.min(opened.size, 64 * 1024 * 1024));
    let at = 0;
    while (at < bytes.length) {
      const n = file.readSync(bytes.subarray(at));
      if (n === null) break;
      at += n;
    }
    return bytes.subarray(0, at);
  } catch {
    return new Uint8Array();
  }
}

/** Reads at most `maxBytes` bytes of a text file, cut at a character boundary, with a note. */
function readBounded(
  path: string,
  maxBytes: number,
): { text: string; bytes: number; kept: number } {
  const bytes = readChecked(path);
  if (bytes.length <= maxBytes) {
    return { text: new TextDecoder().decode(bytes), bytes: bytes.length, kept: bytes.length };
  }
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  const kept = new TextDecoder().decode(bytes.subarray(0, end));
  return {
    text: `${kept}\n[magi: ${path} cut at ${end} of ${bytes.length} bytes]`,
    bytes: bytes.length,
    kept: end,
  };
}

/** magi's own opening lines. */
function defaultBase(env: Record<string, string>): string {
  const who = env.USER || env.LOGNAME || "the person who started you";
  return [
    `You are magi, an agent running in a terminal, working for ${who}.`,
    "You act through the tools you are given; prefer using a tool over guessing. " +
    "Tool results are bounded: when output was cut, a note names the file that holds all of it.",
    "When the task is done, answer briefly with what you did and what you found.",
  ].join("\n");
}

/** Builds the system prompt and lists the context files it carries. */
export function buildPrompt(ctx: PromptContext): Prompt {
  const lines = [
    (ctx.base ?? defaultBase(ctx.env)).trimEnd(),
    "",
    `Working directory: ${ctx.cwd}`,
    `Date: ${ctx.now.toISOString().slice(0, 10)}`,
  ];
  if (ctx.temp) {
    lines.push(
      `Temp folder: ${ctx.temp} (kept until magi exits; \`$TMPDIR\` in \`run\`; the system ` +
        "temp folder is read-only): put temp files and scratch checkouts there.",
    );
  }
  const files: ContextFile[] = [];
  let budget = AGENTS_MD_MAX_BYTES;
  for (const path of contextFiles(ctx.cwd, ctx.env)) {
    let read;
    try {
      read = readBounded(path, budget);
    } catch {
      continue;
    }
    files.push({ path, bytes: read.bytes, kept: read.kept });
    budget -= read.kept;
    if (read.text.trim() === "") continue;
    lines.push("", `Instructions from ${path}:`, "", read.text.trimEnd());
  }
  if (ctx.skills && ctx.skills.length > 0) {
    lines.push(
      "",
      "Skills (load one with the `skill` tool when its description fits the task):",
      ...ctx.skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ").trim()}`),
    );
  }
  if (ctx.extra) lines.push("", ctx.extra.trimEnd());
  return { text: lines.join("\n") + "\n", files };
}

/** Builds the system prompt. */
export function systemPrompt(ctx: PromptContext): string {
  return buildPrompt(ctx).text;
}

/**
 * The prompt for an agent of this runtime: config `system_prompt` (or `system_prompt_file`'s
 * text; a file that cannot be read is one line through `rt.warn`, and magi's own lines serve),
 * the context files for the working folder and the catalogue of `rt.skills`. Masked.
 */
export function promptFor(rt: Runtime, now: Date, extra?: string): Prompt {
  const v = rt.config.values;
  let base = v.system_prompt;
  if (v.system_prompt_file !== undefined) {
    try {
      base = Deno.readTextFileSync(v.system_prompt_file);
    } catch (error) {
      rt.warn(
        `Cannot read system_prompt_file "${v.system_prompt_file}": ${
          (error as Error).message
        }; using ${base === undefined ? "magi's own opening lines" : "system_prompt"}`,
      );
    }
  }
  const prompt = buildPrompt({
    cwd: rt.session.cwd,
    env: rt.env,
    now,
    base,
    skills: rt.skills,
    extra,
    // With the sandbox off, `run` writes where it likes: nothing to tell.
    temp: rt.door.mode === "off" ? undefined : sessionTempDir(),
  });
  return { ...prompt, text: rt.masker.maskText(prompt.text) };
}
