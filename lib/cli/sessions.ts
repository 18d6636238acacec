/**
 * `magi sessions [list | show ID | fork ID] [--json]`: the sessions under the sessions dir,
 * oldest first — id, when it last changed, provider and model, and its first request; one
 * session's conversation; or a copy of one as a new session, to go another way from it
 * (`magi chat --resume NEW`). ID is an id, a unique prefix of one, or `last`.
 *
 * @module
 */
import { defaultSessionsDir, listSessions, type NewEvent, Session } from "../agent/session.ts";
import { copyImages } from "../agent/images.ts";
import { loadConfig } from "../config/load.ts";
import { maskerFor } from "../runtime/runtime.ts";
import { SESSIONS_OPTIONS } from "./options.ts";
import { EXIT, parseCommand, UsageError, warn, write, writeJson } from "./common.ts";

/** Runs `magi sessions`. */
export async function sessionsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, SESSIONS_OPTIONS);
  const [sub = "list", id, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`magi sessions ${sub} takes one ID`);
  const env = Deno.env.toObject();
  const config = loadConfig({ cwd: Deno.cwd(), env, configFlag: values.config });
  const dir = typeof config.values.sessions_dir === "string"
    ? config.values.sessions_dir
    : defaultSessionsDir(env);
  if (sub === "list") {
    if (id !== undefined) throw new UsageError("magi sessions list takes no ID");
    return await list(dir, values.json ?? false);
  }
  if (sub !== "show" && sub !== "fork") {
    throw new UsageError(
      `magi sessions: no subcommand "${sub}"; it takes list, show ID or fork ID`,
    );
  }
  if (!id) {
    throw new UsageError(`magi sessions ${sub} needs a session ID (magi sessions lists them)`);
  }
  const masker = maskerFor(config, env, warn);
  let session: Session;
  try {
    session = Session.open(dir, id, masker, warn);
  } catch (error) {
    warn((error as Error).message);
    return EXIT.usage;
  }
  try {
    if (sub === "show") {
      if (values.json) await writeJson(session.events);
      else await write(conversation(session));
      return EXIT.ok;
    }
    const meta = session.meta;
    const copy = Session.create(dir, masker, {
      cwd: meta?.cwd ?? Deno.cwd(),
      provider: meta?.provider ?? "",
      model: meta?.model ?? "",
    });
    for (const event of session.events) {
      if (event.type === "session" || event.type === "end") continue;
      const { at: _at, ...rest } = event;
      // A tool result's images are the session's own files (images2: lib/agent/images.ts).
      if (rest.type === "tool_result" && rest.images) {
        rest.images = copyImages(rest.images, session.dir, copy.dir) as typeof rest.images;
      }
      copy.append(rest as NewEvent);
    }
    copy.close();
    if (values.json) await writeJson({ id: copy.id, dir: copy.dir, from: session.id });
    else {
      await write(
        `forked ${session.id} into ${copy.id} (magi chat --resume ${copy.id})\n`,
      );
    }
    return EXIT.ok;
  } finally {
    session.close();
  }
}

async function list(dir: string, json: boolean): Promise<number> {
  const sessions = listSessions(dir);
  if (json) {
    await writeJson(sessions);
    return EXIT.ok;
  }
  if (sessions.length === 0) {
    await write(`no sessions in ${dir}\n`);
    return EXIT.ok;
  }
  const lines = sessions.map((s) =>
    `${s.id}  ${s.updated.slice(0, 16).replace("T", " ")}  ${s.provider}/${s.model}  ${s.title}`
  );
  await write(lines.join("\n") + "\n");
  return EXIT.ok;
}

/** The conversation as the person reads it: requests, answers, tool calls and results. */
function conversation(session: Session): string {
  const out: string[] = [];
  const meta = session.meta;
  if (meta) out.push(`session ${session.id} — ${meta.provider}/${meta.model} — ${meta.cwd}`);
  for (const e of session.events) {
    if (e.type === "user") out.push(`\n> ${e.text}`);
    else if (e.type === "assistant") {
      if (e.text) out.push(e.text + (e.interrupted ? "\n(interrupted)" : ""));
      for (const c of e.tool_calls ?? []) out.push(`→ ${c.name} ${c.arguments}`);
    } else if (e.type === "tool_result") {
      const said = e.said.length > 400 ? e.said.slice(0, 400) + "…" : e.said;
      out.push(`${e.is_error ? "✗" : "✓"} ${e.name}\n${said.replace(/\n$/, "")}`);
    } else if (e.type === "usage") {
      out.push(`(tokens: ${e.input_tokens} in · ${e.output_tokens} out)`);
    }
  }
  return out.join("\n") + "\n";
}
