/**
 * `magi sessions [--json]`: the sessions under the sessions dir, oldest first — id, when it
 * last changed, provider and model, and its first request.
 *
 * @module
 */
import { defaultSessionsDir, listSessions } from "../agent/session.ts";
import { loadConfig } from "../config/load.ts";
import { EXIT, parseCommand, write, writeJson } from "./common.ts";

/** Runs `magi sessions`. */
export async function sessionsCommand(args: string[]): Promise<number> {
  const { values } = parseCommand(args, { json: { type: "boolean" } });
  const env = Deno.env.toObject();
  const config = loadConfig({ cwd: Deno.cwd(), env, configFlag: values.config });
  const dir = typeof config.values.sessions_dir === "string"
    ? config.values.sessions_dir
    : defaultSessionsDir(env);
  const sessions = listSessions(dir);
  if (values.json) {
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
