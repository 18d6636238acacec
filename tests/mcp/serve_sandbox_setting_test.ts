/**
 * `magi mcp` reads the sandbox settings as every other command does: the old
 * `"policy": {"sandbox": false}` turns nothing off (a served call runs sandboxed, as a model's
 * call in `magi call --as-model` does) and says so on stderr; `sandbox.mode` "off" and
 * `--sandbox off` run served calls unsandboxed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { magi, magiArgs, makeTool, tempDir, writeConfig } from "../helpers.ts";
import { outsideDir } from "../policy/sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox setting tests skipped: ${why}`);

const NOTE =
  /"policy\.sandbox": false does not turn the sandbox off .*"sandbox": \{"mode": "off"\} does/;

/** What `magi mcp` said to a served call of `probe`, and what it wrote on stderr. */
async function served(
  home: string,
  cwd: string,
  env: Record<string, string>,
  args: string[],
): Promise<{ said: string; stderr: string }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: magiArgs(["mcp", ...args]),
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "magi-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "probe", arguments: {} }) as CallToolResult;
    const said = result.content.map((c) => (c as { text: string }).text).join("");
    return { said, stderr };
  } finally {
    await client.close();
  }
}

Deno.test({
  name: "magi mcp: policy.sandbox false, sandbox.mode off and --sandbox off read as in magi call",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const home = dir.path;
    const root = join(home, "root");
    const tools = join(root, "tools");
    // Outside the roots and the temp folder, which the workspace-write sandbox keeps writable.
    const outside = await outsideDir();
    try {
      await makeTool(
        tools,
        "probe",
        `#!/bin/sh
if [ "$1" = "--help" ]; then echo "probe - writes outside the roots"; exit 0; fi
if echo hi > "$OUT/probe" 2>/dev/null; then echo wrote; else echo refused; fi
rm -f "$OUT/probe"
`,
      );
      const env = {
        OUT: outside,
        XDG_CONFIG_HOME: join(home, "config"),
        XDG_CACHE_HOME: join(home, "cache"),
        XDG_STATE_HOME: join(home, "state"),
      };
      const cases = [
        { name: "policy.sandbox false", extra: { policy: { sandbox: false } }, flags: [] },
        { name: "sandbox.mode off", extra: { sandbox: { mode: "off" } }, flags: [] },
        { name: "--sandbox off", extra: {}, flags: ["--sandbox", "off"] },
        { name: "nothing set", extra: {}, flags: [] },
      ];
      for (const c of cases) {
        const extra = c.extra as { policy?: Record<string, unknown> };
        const config = await writeConfig(home, {
          shipped_tools: false,
          roots: [root],
          tools_dir: [tools],
          ...extra,
          // The person's own allow rule: a served call of it runs in workspace-write.
          policy: { ...extra.policy, rules: [{ tool: "probe", decision: "allow" }] },
        });
        const args = ["--config", config, ...c.flags];
        const mcp = await served(home, root, env, args);
        const call = await magi(["call", "probe", "{}", "--as-model", ...args], {
          cwd: root,
          env,
          home,
        });
        assert.equal(call.code, 0, call.stderr);
        const off = c.flags.length > 0 || c.name === "sandbox.mode off";
        assert.equal(mcp.said.trim(), off ? "wrote" : "refused", `${c.name}: ${mcp.stderr}`);
        assert.equal(call.stdout.trim(), mcp.said.trim(), `${c.name}: magi call differs`);
        const noted = c.name === "policy.sandbox false";
        for (const stderr of [mcp.stderr, call.stderr]) {
          assert.equal(NOTE.test(stderr), noted, `${c.name}: ${stderr}`);
        }
      }
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});
