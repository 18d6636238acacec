/**
 * The inside of a body process (see `body_process.ts`): a Deno process in a bwrap mount
 * namespace that holds only the roots (and the system's libraries, Deno and magi's own code,
 * read-only), running file builtins' bodies ({@link BodyJob}, as a body Worker does) under Deno
 * permissions limited to the roots. A symlink swapped in can only point at what is mounted.
 *
 * Protocol: one JSON object a line on stdin, `{id, job}`; on stdout, per job, `{id, said}`
 * (text) or `{id, bytes}` (base64) while it runs, then `{id, done: result}` (a `said` that is
 * bytes comes as `saidBytes`, base64) or `{id, error: {name, message}}`. Jobs run concurrently.
 *
 * @module
 */
import { type BodyJob, runBuiltin } from "./body_job.ts";
import { Buffer } from "node:buffer";

const encoder = new TextEncoder();
/** Lines go out whole and in order, however many jobs run. */
let out = Promise.resolve();

function send(message: unknown): Promise<void> {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  out = out.then(async () => {
    for (let at = 0; at < bytes.length;) at += await Deno.stdout.write(bytes.subarray(at));
  });
  return out;
}

async function serve(id: number, job: BodyJob): Promise<void> {
  try {
    const result = await runBuiltin(
      job,
      (chunk) =>
        send(
          typeof chunk === "string"
            ? { id, said: chunk }
            : { id, bytes: Buffer.from(chunk).toString("base64") },
        ),
    );
    const { said, ...rest } = result;
    await send(
      typeof said === "string"
        ? { id, done: { said, ...rest } }
        : { id, done: { said: "", ...rest }, saidBytes: Buffer.from(said).toString("base64") },
    );
  } catch (error) {
    const e = error as Error;
    await send({ id, error: { name: e?.name ?? "Error", message: String(e?.message ?? e) } });
  }
}

if (import.meta.main) {
  await send({ ready: true });
  let buffered = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() === "") continue;
      const { id, job } = JSON.parse(line) as { id: number; job: BodyJob };
      serve(id, job);
    }
  }
}
