/**
 * A socket that goes away while bwrap sets the sandbox up, in a folder the sandbox may write:
 * bwrap makes its mount point there, an empty file on the host. Once the command ends magi
 * removes it, so the server that binds that path again can (real bwrap, a real listener).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sandboxLauncher, sandboxProblem, trackLaunches } from "../../lib/confinement/sandbox.ts";
import { spawnProcess } from "../../lib/exec/spawn.ts";
import { world } from "./sandbox_world.ts";

const why = await sandboxProblem();

Deno.test({
  name: "sandbox: the empty file bwrap leaves where a covered socket went away is removed after",
  ignore: why !== undefined,
  fn: async () => {
    await using w = await world();
    const sock = join(w.root, "server.sock");
    const wrap = sandboxLauncher(
      { mode: "workspace-write", network: false, denyRead: [], unixSockets: true },
      { roots: [w.root], home: w.home, hidden: [] },
      "workspace-write",
    );
    const launches = trackLaunches(wrap);
    const first = Deno.listen({ transport: "unix", path: sock });
    // The command is made while the server listens (its socket is covered) ...
    const command = launches.wrap!("/bin/true", []);
    assert.ok(command.covers?.includes(sock), command.covers?.join(" "));
    // ... and the server goes (Deno removes the file) before bwrap mounts over it.
    first.close();
    // Deno unlinks a closed listener's path, maybe later: wait for that unlink (one coming after
    // bwrap made its mount point would remove that file too), then make sure the path is gone.
    for (let i = 0; i < 100 && await Deno.lstat(sock).then(() => true, () => false); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await Deno.remove(sock).catch(() => {});
    const r = await spawnProcess({
      program: command.program,
      args: command.args,
      cwd: w.root,
      env: Deno.env.toObject(),
      timeoutMs: 30_000,
      onStdout: () => {},
      onStderr: () => {},
    });
    assert.equal(r.code, 0);
    const left = await Deno.lstat(sock).then((i) => i.isFile, () => false);
    assert.ok(left, "bwrap made its mount point on the host (the case this test is about)");
    launches.release();
    await assert.rejects(Deno.lstat(sock), Deno.errors.NotFound);
    // The server binds its path again.
    Deno.listen({ transport: "unix", path: sock }).close();
  },
});
