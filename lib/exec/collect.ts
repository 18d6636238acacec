/**
 * A short command whose whole stdout is the answer (a tool's `--help`, a peer's
 * `tools --json`): spawned through {@link spawnProcess}, its stdout gathered.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type SpawnOptions, type SpawnOutcome, spawnProcess } from "./spawn.ts";

/** How long a listing command may take to end once told to, in milliseconds. */
const LISTING_GRACE_MS = 500;

/**
 * Runs the command and keeps what it prints on stdout (up to `opts.maxStdoutBytes`).
 *
 * @returns the outcome, with `stdout` the bytes printed
 */
export async function spawnCollecting(
  opts: Omit<SpawnOptions, "onStdout" | "graceMs">,
): Promise<SpawnOutcome & { stdout: Uint8Array }> {
  const chunks: Uint8Array[] = [];
  const spawned = await spawnProcess({
    ...opts,
    graceMs: LISTING_GRACE_MS,
    onStdout: (chunk) => void chunks.push(chunk.slice()),
  });
  return { ...spawned, stdout: Buffer.concat(chunks) };
}
