/**
 * `magi new` on a command whose help is an error message (`git nosuchsub`): refused with one
 * line, unless --generic, whose tool then does not carry the error as its description.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTool, type NewRequest } from "../../lib/cli/new.ts";
import { UsageError } from "../../lib/cli/common.ts";
import { magi, tempDir } from "../helpers.ts";

const FAILING =
  "#!/bin/sh\necho \"fake: '$1' is not a fake command. See 'fake --help'.\" >&2\nexit 1\n";

async function request(dir: string, generic: boolean): Promise<NewRequest> {
  const program = join(dir, "fake");
  await Deno.writeTextFile(program, FAILING, { mode: 0o755 });
  return {
    name: "zz",
    words: [program, "nosuchsub"],
    toolsDir: join(dir, "tools"),
    cwd: dir,
    env: { ...Deno.env.toObject(), XDG_CACHE_HOME: join(dir, "cache") },
    generic,
    force: false,
    dryRun: true,
  };
}

Deno.test("magi new refuses a command whose help is only an error message", async () => {
  await using dir = await tempDir();
  await assert.rejects(
    makeTool(await request(dir.path, false)),
    (error: unknown) =>
      error instanceof UsageError &&
      /nosuchsub --help" failed \(exit status 1\) and printed no help, only: fake: 'nosuchsub' is not a fake command/
        .test(error.message) &&
      !error.message.includes("\n"),
  );
});

Deno.test("magi new --generic on such a command does not use the error as the description", async () => {
  await using dir = await tempDir();
  const result = await makeTool(await request(dir.path, true));
  assert.equal(
    result.plan.summary,
    `Runs ${dir.path}/fake nosuchsub (its help text could not be read)`,
  );
});

Deno.test("magi new --from 'git nosuchsub' prints one line and exits 2", async () => {
  await using dir = await tempDir();
  const run = await magi(["new", "zz", "--from", "git nosuchsub", "--tools-dir", dir.path]);
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, "");
  assert.match(
    run.stderr,
    /^magi: "git nosuchsub --help" failed \(exit status 1\)[^\n]*--generic[^\n]*\n$/,
  );
  assert.deepEqual([...Deno.readDirSync(dir.path)], []);
});
