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
 * - the recipient's loop takes the `*.json` files in name order at its next turn, records
 *   each in its session and moves it to `delivered/`; a file that is not such a message is
 *   moved to `bad/` with one line.
 *
 * @module
 */
import { join } from "node:path";
import { privateDir } from "../output/private.ts";
import type { Warn } from "../registry/types.ts";

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
 * Leaves a message in `to`'s inbox, atomically (a temp file renamed).
 *
 * @returns the message file's path
 * @throws TypeError when `to` is not a session id; Deno errors when the folder cannot be written
 */
export function sendMail(mailDir: string, from: string, to: string, text: string): string {
  const dir = inbox(mailDir, to);
  privateDir(mailDir);
  privateDir(dir);
  const now = new Date();
  // The sequence orders one process's messages sent in the same millisecond.
  const seq = String(++sent % 1e6).padStart(6, "0");
  const name = `${now.toISOString().replace(/[-:.]/g, "")}-${seq}-${
    crypto.randomUUID().slice(0, 8)
  }`;
  const mail: Mail = { v: 1, from, to, at: now.toISOString(), text };
  const tmp = join(dir, `.${name}.tmp`);
  Deno.writeTextFileSync(tmp, JSON.stringify(mail) + "\n", { mode: 0o600 });
  const path = join(dir, `${name}.json`);
  Deno.renameSync(tmp, path);
  return path;
}

function isMail(value: unknown): value is Mail {
  const m = value as Record<string, unknown>;
  return typeof m === "object" && m !== null && typeof m.from === "string" &&
    typeof m.text === "string";
}

/**
 * Takes `id`'s unread mail, oldest first (by file name), moving each file to `delivered/`.
 * Never throws: a folder that cannot be read is no mail; a bad file costs one line.
 */
export function takeMail(mailDir: string, id: string, warn: Warn): Mail[] {
  let dir: string;
  let names: string[];
  try {
    dir = inbox(mailDir, id);
    names = [...Deno.readDirSync(dir)]
      .filter((e) => e.isFile && e.name.endsWith(".json") && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  const out: Mail[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let mail: unknown;
    try {
      mail = JSON.parse(Deno.readTextFileSync(path));
    } catch {
      mail = undefined;
    }
    const ok = isMail(mail);
    const to = join(dir, ok ? "delivered" : "bad");
    try {
      privateDir(to);
      Deno.renameSync(path, join(to, name));
    } catch {
      continue; // another reader took it
    }
    if (!isMail(mail)) {
      warn(`mail ${path}: not a message ({"from", "text"} as JSON); moved to bad/`);
      continue;
    }
    out.push({
      v: 1,
      from: mail.from,
      to: id,
      at: typeof mail.at === "string" ? mail.at : "",
      text: mail.text,
    });
  }
  return out;
}

/** A message as the recipient's model reads it. */
export function mailText(mail: Mail): string {
  const bytes = new TextEncoder().encode(mail.text);
  let text = mail.text;
  if (bytes.length > MAIL_TEXT_BYTES) {
    let end = MAIL_TEXT_BYTES;
    while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
    text = new TextDecoder().decode(bytes.subarray(0, end)) +
      `\n[magi: the message was cut at ${end} of ${bytes.length} bytes]`;
  }
  return `[mail from ${mail.from}]\n${text}`;
}
