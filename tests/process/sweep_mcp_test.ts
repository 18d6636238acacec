/**
 * What an MCP server magi started leaves running outside its process group (`setsid`) is
 * ended once the server has ended, as for a tool's children.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ChildStdioTransport } from "../../lib/sources/mcp/stdio.ts";
import { sweepNow } from "../../lib/exec/sweep.ts";
import { tempDir } from "../helpers.ts";
import { alive, pidIn } from "./helpers.ts";

Deno.test("a daemon an MCP server left in a session of its own is ended after the server", async () => {
  await using dir = await tempDir();
  const pidFile = join(dir.path, "daemon.pid");
  // Not a real MCP server: the transport only starts it, reads its stdout and ends it.
  const transport = new ChildStdioTransport({
    command: "/bin/sh",
    args: [
      "-c",
      `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "${pidFile}" </dev/null >/dev/null 2>&1 &
exec cat`,
    ],
    cwd: dir.path,
    env: { PATH: "/usr/bin:/bin" },
  });
  await transport.start();
  const pid = await pidIn(pidFile);
  await transport.close();
  // It left the group, so ending the server's group did not end it.
  assert.equal(alive(pid), true);
  assert.ok(sweepNow() >= 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false);
});
