/**
 * A failed start tried again (`SpawnOptions.restart`, the sandbox's: a socket that went away
 * while bwrap set it up): stderr that begins with the prefix is held back; on status 1 the
 * command `again` answers starts in its place with the same stdin, and what the first wrote to
 * stderr is dropped; otherwise nothing is lost or reordered.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type SpawnOutcome, spawnProcess } from "../../lib/exec/spawn.ts";
import type { Restart } from "../../lib/core/types.ts";
import { goneCover, sandboxRestart } from "../../lib/confinement/sandbox_restart.ts";
import { tempDir } from "../helpers.ts";

const FAILED = `echo "bwrap: Can't create file at /gone/s: Read-only file system" >&2; exit 1`;

async function run(
  line: string,
  restart: Restart,
  stdin?: string,
): Promise<{ r: SpawnOutcome; out: string; err: string }> {
  let out = "";
  let err = "";
  const dec = new TextDecoder();
  const r = await spawnProcess({
    program: "/bin/sh",
    args: ["-c", line],
    cwd: "/",
    env: { PATH: "/usr/bin:/bin" },
    stdin,
    timeoutMs: 10_000,
    restart,
    onStdout: (c) => void (out += dec.decode(c)),
    onStderr: (c) => void (err += dec.decode(c)),
  });
  return { r, out, err };
}

Deno.test("spawn restart: a start that failed is started again, same stdin, its message dropped", async () => {
  const seen: string[] = [];
  const restart: Restart = {
    prefix: "bwrap: Can't ",
    again: (stderr) => {
      seen.push(stderr);
      return { program: "/bin/sh", args: ["-c", "cat; echo second >&2"] };
    },
  };
  const { r, out, err } = await run(FAILED, restart, "the same stdin\n");
  assert.equal(r.code, 0);
  assert.equal(out, "the same stdin\n");
  assert.equal(err, "second\n");
  assert.deepEqual(seen, ["bwrap: Can't create file at /gone/s: Read-only file system\n"]);
});

Deno.test("spawn restart: stderr like the prefix from a program that goes on is all delivered", async () => {
  const restart: Restart = {
    prefix: "bwrap: Can't ",
    again: () => assert.fail("not a failed start"),
  };
  // Status 0, then stdout first: both deliver what was held, in order.
  const ok = await run(`echo "bwrap: Can't x" >&2; exit 0`, restart);
  assert.equal(ok.err, "bwrap: Can't x\n");
  const first = await run(`echo "bwrap: Can't y" >&2; echo out; echo more >&2; exit 1`, {
    prefix: "bwrap: Can't ",
    again: () => undefined,
  });
  assert.equal(first.out, "out\n");
  assert.equal(first.err, "bwrap: Can't y\nmore\n");
  // Not the prefix: streamed as ever, and `again` is not asked.
  const other = await run(`echo "other" >&2; exit 1`, restart);
  assert.equal(other.err, "other\n");
  assert.equal(other.r.code, 1);
});

Deno.test("spawn restart: a failure `again` recognises but gives up on is the call's one line", async () => {
  const { r, out, err } = await run(FAILED, {
    prefix: "bwrap: Can't ",
    again: () => ({ fail: "sandbox: a socket went away (x); the call did not run — try again" }),
  });
  assert.equal(r.startError, "sandbox: a socket went away (x); the call did not run — try again");
  assert.equal(out + err, "");
});

Deno.test("sandbox restart: only bwrap's line about a covered path that went away counts", async () => {
  await using dir = await tempDir();
  const sock = join(dir.path, "s");
  const listener = Deno.listen({ transport: "unix", path: sock });
  try {
    const gone = join(dir.path, "gone", "s");
    const line = (p: string) => `bwrap: Can't create file at ${p}: Read-only file system\n`;
    assert.equal(goneCover(line(gone), [gone, sock]), gone);
    assert.equal(goneCover(`bwrap: Can't mkdir parents for ${gone}: No such file\n`, [gone]), gone);
    // A folder above a covered socket gone with it, in a read-only folder bwrap cannot fill.
    const folder = join(dir.path, "gone");
    const mkdir = `bwrap: Can't mkdir ${folder}: Read-only file system\n`;
    assert.equal(goneCover(mkdir, [gone, sock]), gone);
    assert.equal(goneCover(mkdir, [sock]), undefined);
    // Still a socket: not this race. Not covered, or not bwrap's one line: not this either.
    assert.equal(goneCover(line(sock), [sock]), undefined);
    assert.equal(goneCover(line(gone), [sock]), undefined);
    assert.equal(goneCover("hello\n" + line(gone), [gone]), undefined);
    // Made again with the nearest folder still there shown empty; gives up after the tries.
    const asked: (readonly string[])[] = [];
    let restart: Restart | undefined = sandboxRestart([gone], (churned) => {
      asked.push(churned);
      return { program: "bwrap", args: [], covers: [gone] };
    }, 2);
    const answers = [];
    while (restart) {
      const a = restart.again(line(gone));
      answers.push(a);
      restart = a && "restart" in a ? a.restart : undefined;
    }
    assert.deepEqual(asked, [[dir.path], [dir.path]]);
    assert.match(
      (answers.at(-1) as { fail: string }).fail,
      /^sandbox: a socket went away while the sandbox was set up \(.*\/gone\/s\); the call did not run — try again$/,
    );
  } finally {
    listener.close();
  }
});
