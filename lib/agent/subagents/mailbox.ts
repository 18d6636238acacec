/**
 * The mailbox parent and sub-agents share (`MAGI_MAIL_DIR`, SPEC S5.2). Its format:
 *
 * - `$MAGI_MAIL_DIR/<recipient session id>/` holds the recipient's unread mail;
 * - one message is one file, `<sortable time>-<random>.json`, holding one JSON object
 *   `{"v": 1, "from": "<sender session id or a tool's name>", "to": "<recipient>",
 *   "at": "<ISO 8601>", "text": "…"}`;
 * - a sender writes it as `.<name>.tmp` in the same folder and renames it to `<name>.json`,
 *   so a reader never sees half a message (a tool in the shell:
 *   `printf '%s' "$json" > "$d/.m.tmp" && mv "$d/.m.tmp" "$d/$(date +%s%N)-m.json"`);
 * - the recipient's loop takes the `*.json` files in name order at its next turn and records
 *   each in its session; a file that is not such a message costs one line. magi never moves,
 *   deletes or changes a file there: the mailbox is writable from inside the sandbox, so
 *   anything in it may be a link planted to aim a host-side write (a rename into `bad/`
 *   through a linked folder would land outside the sandbox). Which messages were taken is
 *   kept beside the mailbox, in the session's own folder (`mail-read/<recipient>`), which no
 *   sandbox can write. Only a regular file (not a link) in a real folder (not a link) is read,
 *   and only when the file opened is the one looked at (device and inode).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { openPrivateAppend, privateDir } from "../../core/private.ts";
import type { Warn } from "../../core/types.ts";

/** One message. */
export interface Mail {
  v: 1;
  from: string;
  to: string;
  /** ISO 8601 time it was sent. */
  at: string;
  text: string;
}

/** The most bytes of one message's text that is delivered (the rest is cut with a note). */
export const MAIL_TEXT_BYTES = 16 * 1024;

const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

function inbox(mailDir: string, to: string): string {
  if (!SAFE_ID.test(to) || to.startsWith(".")) {
    throw new TypeError(`Cannot send mail to "${to}": not a session id`);
  }
  return join(mailDir, to);
}

let sent = 0;

/**
 * The mailbox magi itself writes to (the `mail` builtin): beside the shared one, in the
 * session's own folder, which no sandbox can write. Writing into the shared mailbox from the
 * host would resolve a path a sandboxed program can swap for a link between magi's check
 * and its write (a message file landing in `~/.bashrc.d`).
 */
export function hostMailDir(mailDir: string): string {
  return join(dirname(mailDir), "mail-host");
}

/**
 * `dir` as a real folder (made 0700 when missing).
 *
 * @throws Error when it is a link or not a folder (planted to aim magi's writes elsewhere)
 */
function realFolder(dir: string): void {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.lstatSync(dir);
  } catch {
    Deno.mkdirSync(dir, { mode: 0o700 });
    return;
  }
  if (info.isSymlink || !info.isDirectory) {
    throw new Error(`Cannot use mailbox folder "${dir}": it is not a folder of its own`);
  }
}

/**
 * Makes `id`'s inbox in the shared mailbox, for its tools' mail (`$MAGI_MAIL_DIR/<id>/`).
 * Called when the session starts, before any of its tools runs.
 */
export function openInbox(mailDir: string, id: string): void {
  privateDir(mailDir);
  try {
    realFolder(inbox(mailDir, id));
  } catch {
    // a planted link: that inbox is not read (takeMail passes over it)
  }
}

/**
 * Leaves a message in `to`'s inbox, atomically (a temp file renamed).
 *
 * @returns the message file's path
 * @throws TypeError when `to` is not a session id; Error when the inbox is a link; Deno errors
 *   when the folder cannot be written
 */
export function sendMail(mailDir: string, from: string, to: string, text: string): string {
  const dir = inbox(mailDir, to);
  privateDir(mailDir);
  realFolder(dir);
  const now = new Date();
  // The sequence orders one process's messages sent in the same millisecond.
  const seq = String(++sent % 1e6).padStart(6, "0");
  const name = `${now.toISOString().replace(/[-:.]/g, "")}-${seq}-${
    crypto.randomUUID().slice(0, 8)
  }`;
  const mail: Mail = { v: 1, from, to, at: now.toISOString(), text };
  const tmp = join(dir, `.${name}.tmp`);
  Deno.writeTextFileSync(tmp, JSON.stringify(mail) + "\n", { mode: 0o600, createNew: true });
  const path = join(dir, `${name}.json`);
  Deno.renameSync(tmp, path);
  return path;
}

function isMail(value: unknown): value is Mail {
  const m = value as Record<string, unknown>;
  return typeof m === "object" && m !== null && typeof m.from === "string" &&
    typeof m.text === "string";
}

/** The largest message file read (a bigger one is not a message). */
const MAIL_FILE_BYTES = 1024 * 1024;

/** Where the names of `id`'s taken messages are kept: the session's folder, not the mailbox. */
function readLog(mailDir: string, id: string): string {
  return join(privateDir(join(dirname(mailDir), "mail-read")), id);
}

/**
 * The text of the regular file `name` in the real folder `dir`, when the file opened is the
 * one looked at; undefined for a link, a folder swapped for a link, or a file too big.
 */
function readOwnFile(dir: string, name: string): string | undefined {
  const folder = Deno.lstatSync(dir);
  if (folder.isSymlink || !folder.isDirectory) return undefined;
  const path = join(dir, name);
  const looked = Deno.lstatSync(path);
  if (!looked.isFile || looked.size > MAIL_FILE_BYTES) return undefined;
  using file = Deno.openSync(path, { read: true });
  const opened = file.statSync();
  const again = Deno.lstatSync(dir);
  if (
    opened.ino !== looked.ino || opened.dev !== looked.dev || again.ino !== folder.ino ||
    again.dev !== folder.dev || again.isSymlink
  ) {
    return undefined;
  }
  const bytes = new Uint8Array(Math.min(opened.size, MAIL_FILE_BYTES));
  let got = 0;
  while (got < bytes.length) {
    const n = file.readSync(bytes.subarray(got));
    if (n === null) break;
    got += n;
  }
  return new TextDecoder().decode(bytes.subarray(0, got));
}

/** A sender's name as given, when it is an id; else a quoted stand-in (no forged lines). */
function senderName(from: string): string {
  return SAFE_ID.test(from) ? from : JSON.stringify(from.slice(0, 64));
}

/**
 * Takes `id`'s unread mail, oldest first (by file name); the names taken are kept in the
 * session's `mail-read/` so each is delivered once. Never throws: a folder that cannot be read
 * is no mail; a bad file costs one line (once). Nothing in the mailbox is moved or changed.
 */
export function takeMail(mailDir: string, id: string, warn: Warn): Mail[] {
  return take(mailDir, id, warn, Infinity).mail;
}

/** What one turn took of the mail, and what waits for a later one. */
export interface MailTaken {
  mail: Mail[];
  /** Messages left unread, by the folder they wait in. */
  left: Map<string, number>;
}

/**
 * Takes as much of `id`'s unread mail as `maxBytes` holds (in bytes of {@link mailText} with
 * each text cut to at most `maxBytes`), magi's own mail (the `mail` builtin) first, then
 * tools'; the first message is always taken. The rest stays unread in the mailbox for a
 * later turn. Never throws (see {@link takeMail}).
 */
function take(mailDir: string, id: string, warn: Warn, maxBytes: number): MailTaken {
  const budget: Budget = { max: maxBytes, used: 0, taken: 0, left: new Map() };
  // magi's own mail (hostMailDir) and tools' mail (the shared folder), each taken once.
  const own = takeFrom(hostMailDir(mailDir), "host/", mailDir, id, warn, budget);
  const tools = takeFrom(mailDir, "", mailDir, id, warn, budget);
  const mail = [...own, ...tools].sort((a, b) => a.at < b.at ? -1 : a.at > b.at ? 1 : 0);
  return { mail, left: budget.left };
}

/** The bytes one turn's mail may still take, shared by the boxes it is taken from. */
interface Budget {
  max: number;
  used: number;
  /** Messages taken so far. */
  taken: number;
  /** The bound was reached: nothing more is taken this turn. */
  full?: boolean;
  left: Map<string, number>;
}

/**
 * The unread mail of one turn as the model reads it ({@link mailText}), at most about
 * `maxBytes` in all (a tool result's bound, `limits.said_bytes`): a flood of messages cannot
 * fill the context in one turn. When some wait for a later turn, the last message says how
 * many and in which folder.
 *
 * @param maxBytes bytes of text one turn's mail may add (each message's text is cut to it too)
 */
export function deliverMail(
  mailDir: string,
  id: string,
  warn: Warn,
  maxBytes: number,
): { from: string; text: string }[] {
  const { mail, left } = take(mailDir, id, warn, maxBytes);
  const out = mail.map((m) => ({ from: m.from, text: mailText(m, maxBytes) }));
  const waiting = [...left.values()].reduce((a, b) => a + b, 0);
  if (waiting > 0 && out.length > 0) {
    const where = [...left.keys()].map((d) => `"${d}"`).join(" and ");
    out[out.length - 1].text +=
      `\n[magi: ${waiting} more message${
        waiting === 1 ? "" : "s"
      } wait in the mailbox ${where}: this turn's mail is bound to ${maxBytes} bytes; ` +
      "they are delivered at the next turns]";
  }
  return out;
}

function takeFrom(
  box: string,
  tag: string,
  mailDir: string,
  id: string,
  warn: Warn,
  budget: Budget,
): Mail[] {
  let dir: string;
  let names: string[];
  let log: string;
  let taken: Set<string>;
  try {
    dir = inbox(box, id);
    log = readLog(mailDir, id);
    taken = new Set(readText(log).split("\n").filter((l) => l !== ""));
    const folder = Deno.lstatSync(dir);
    if (folder.isSymlink || !folder.isDirectory) return [];
    names = [...Deno.readDirSync(dir)]
      .filter((e) => e.isFile && e.name.endsWith(".json") && !e.name.startsWith("."))
      .map((e) => e.name)
      .filter((n) => !taken.has(tag + n))
      .sort();
  } catch {
    return [];
  }
  if (names.length === 0) return [];
  if (budget.full) {
    budget.left.set(dir, names.length);
    return [];
  }
  const out: Mail[] = [];
  using record = openPrivateAppend(log);
  const done = (name: string) => record.writeSync(new TextEncoder().encode(tag + name + "\n"));
  for (const [i, name] of names.entries()) {
    let mail: unknown;
    try {
      const text = readOwnFile(dir, name);
      mail = text === undefined ? undefined : JSON.parse(text);
    } catch {
      mail = undefined;
    }
    if (!isMail(mail)) {
      done(name);
      warn(`mail ${join(dir, name)}: not a message ({"from", "text"} as JSON, a file of its own)`);
      continue;
    }
    const message: Mail = {
      v: 1,
      from: senderName(mail.from),
      to: id,
      at: typeof mail.at === "string" ? mail.at : "",
      text: mail.text,
    };
    const size = Number.isFinite(budget.max) ? utf8Length(mailText(message, budget.max)) : 0;
    if (budget.taken > 0 && budget.used + size > budget.max) {
      // Left unread (not recorded): a later turn takes it.
      budget.left.set(dir, names.length - i);
      budget.full = true;
      break;
    }
    done(name);
    budget.used += size;
    budget.taken++;
    out.push(message);
  }
  return out;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

function readText(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/**
 * A message as the recipient's model reads it: its text cut to {@link MAIL_TEXT_BYTES} (or
 * `maxBytes`, when smaller) with a note.
 */
export function mailText(mail: Mail, maxBytes = MAIL_TEXT_BYTES): string {
  const bytes = new TextEncoder().encode(mail.text);
  const max = Math.max(1, Math.min(MAIL_TEXT_BYTES, maxBytes));
  let text = mail.text;
  if (bytes.length > max) {
    let end = max;
    while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
    text = new TextDecoder().decode(bytes.subarray(0, end)) +
      `\n[magi: the message was cut at ${end} of ${bytes.length} bytes]`;
  }
  return `[mail from ${mail.from} — a sub-agent or a tool, not the person]\n${text}`;
}
