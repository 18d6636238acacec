/** Helpers shared by the masking tests. */
import assert from "node:assert/strict";
import type { Masker } from "../../lib/pipeline/mask.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { makeTool, tempDir, testRuntime } from "../helpers.ts";

/** A secret with characters that base64, URL and JSON forms change. */
export const SECRET = "sk-live-9f8e7d6c5b4a3210fedcba98+/x";

/**
 * Lines holding the secret at every offset from a line start of base64 (48 and 57 bytes)
 * and of dumps (16 bytes), with the default count.
 */
export function textWithSecret(secret = SECRET, count = 60): string {
  let text = "";
  for (let i = 0; i < count; i++) text += `line ${i}: ${".".repeat(i)}${secret} end\n`;
  return text;
}

/** Masks `text` as a stream of chunks of 1–150 bytes (sizes drawn from `seed`). */
export function streamed(m: Masker, text: string, seed: number): string {
  const stream = m.stream();
  let out = "";
  for (let i = 0; i < text.length;) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = Math.min(text.length, i + 1 + (seed % 150));
    out += stream.push(text.slice(i, j));
    i = j;
  }
  return out + stream.end();
}

/** Runs `command` (a shell command line reading standard input) through the pipeline. */
export async function throughPipeline(command: string, stdin: string, env: Record<string, string>) {
  await using dir = await tempDir();
  await makeTool(
    dir.path,
    "encode",
    '#!/bin/sh\nif [ "$1" = "--help" ]; then echo "Run a filter."; echo "encode COMMAND"; exit 0; fi\nexec sh -c "$1"\n',
  );
  await using t = await testRuntime({ toolsDirs: [dir.path], env });
  const r = await runTool(t.rt, { name: "encode", args: { args: [command], stdin } });
  assert.equal(r.is_error, false, r.said);
  return r.said;
}

/** Runs `command` with `stdin` directly and returns what it printed. */
export function direct(command: string, stdin: string): Promise<string> {
  const child = new Deno.Command("sh", { args: ["-c", command], stdin: "piped", stdout: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  return writer.write(new TextEncoder().encode(stdin)).then(() => writer.close())
    .then(() => child.output()).then((o) => new TextDecoder().decode(o.stdout));
}
