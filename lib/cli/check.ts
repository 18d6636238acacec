/**
 * `magi check` (also `magi tools --selftest`): runs each tools_dir tool's `selftest.sh`
 * with the tool links on PATH, and reports each.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { childEnv } from "../exec/env.ts";
import { stderrTail } from "../exec/outcome.ts";
import { spawnProcess } from "../exec/spawn.ts";
import { parseOptionsOnly, runtimeFor, write } from "./common.ts";

/** Time limit of one selftest, in milliseconds. */
const SELFTEST_TIMEOUT_MS = 60_000;

/** Runs `magi check`; exits 1 when any selftest fails. */
export async function checkCommand(args: string[]): Promise<number> {
  const values = parseOptionsOnly("check", args, {});
  const rt = await runtimeFor(values, { calls: true });
  let failed = 0;
  let ran = 0;
  for (const tool of rt.found) {
    if (!tool.selftest || rt.registry.get(tool.name)?.origin.where !== tool.folder) continue;
    ran++;
    const out: Uint8Array[] = [];
    const spawned = await spawnProcess({
      program: "/bin/sh", // by its path: PATH may hold a root's folders (README, host look-up)
      args: [tool.selftest],
      cwd: tool.folder,
      env: childEnv(rt.toolEnv, rt.linksDir, { ...rt.context, MAGI_CWD: tool.folder }),
      timeoutMs: SELFTEST_TIMEOUT_MS,
      onStdout: (chunk) => void out.push(chunk.slice()),
    });
    if (!spawned.startError && !spawned.timedOut && spawned.code === 0) {
      await write(`ok    ${tool.name}\n`);
      continue;
    }
    failed++;
    const why = spawned.startError ??
      (spawned.timedOut
        ? `timed out after ${SELFTEST_TIMEOUT_MS / 1000} s`
        : spawned.signal
        ? `killed by ${spawned.signal}`
        : `exit status ${spawned.code}`);
    const said = stderrTail(Buffer.concat(out)) + "\n" +
      stderrTail(spawned.stderrTail);
    const detail = rt.masker.maskText(said.trim()).split("\n").map((l) => `      ${l}`).join("\n");
    await write(`FAIL  ${tool.name}: ${why}\n${detail}\n`);
  }
  await write(`${ran - failed} passed, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}
