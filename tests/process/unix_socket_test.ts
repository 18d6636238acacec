/**
 * The folder of a user's sockets (`socketsParent`): made private, and refused (the socket's
 * folder goes straight into the temp folder) when it is a symlink or others can enter it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ownUid, socketsParent } from "../../lib/exec/unix_socket.ts";

Deno.test({
  name: "sockets folder: made 0700; a symlink or a group-accessible folder is refused",
  fn: async () => {
    const temp = await Deno.makeTempDir({ prefix: "magi-sockets-test-" });
    try {
      const name = `magi-sockets-${ownUid()}`;
      const made = socketsParent(temp);
      assert.equal(made, join(temp, name));
      assert.equal((await Deno.lstat(made)).mode! & 0o777, 0o700);
      await Deno.chmod(made, 0o750);
      assert.equal(socketsParent(temp), undefined);
      await Deno.remove(made);
      const elsewhere = await Deno.makeTempDir({ dir: temp });
      await Deno.symlink(elsewhere, made);
      assert.equal(socketsParent(temp), undefined);
    } finally {
      await Deno.remove(temp, { recursive: true });
    }
  },
});
