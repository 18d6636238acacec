/**
 * A hook's file or an MCP server's program missing when the session starts (issue #13): a
 * sandboxed call that makes it does not get it run — the hook is skipped, the server not
 * started, one line each says why. Real bwrap, real processes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { laterMissing, pathWords, plantedSince } from "../../lib/policy/later_missing.ts";
import { testRuntime } from "../helpers.ts";
import { closeMcpServers, mcpTools } from "../../lib/sources/mcp/client.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { laterMissing as noteMissing } from "../../lib/policy/later_missing.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);

Deno.test("later_missing: the words that name what runs, not the data a program makes", () => {
  assert.deepEqual(pathWords({ line: "sh scripts/hook >> logs/h.log", cwd: "/w" }), [
    "scripts/hook",
  ]);
  assert.deepEqual(
    pathWords({ argv: ["deno", "run", "-A", "./srv/main.ts", "--db", "./data/x.db"], cwd: "/w" }),
    ["./srv/main.ts"],
  );
  assert.deepEqual(pathWords({ argv: ["./bin/server", "https://x/y"], cwd: "/w" }), [
    "./bin/server",
  ]);
});

Deno.test("later_missing: a file missing at the start and there later is refused", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-latermiss-" }));
  try {
    const program = { line: "sh ./late.sh", cwd: dir };
    const noted = laterMissing(program, undefined);
    assert.equal(plantedSince(program, noted, dir, undefined), undefined);
    await Deno.writeTextFile(join(dir, "late.sh"), "echo hi\n");
    assert.match(
      plantedSince(program, noted, dir, undefined) ?? "",
      /did not exist when the session started/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "sandbox: a hook's script and an MCP server's program a call makes after the start " +
    "are not run (one line each)",
  ignore: why !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-latermiss-" }));
    try {
      const home = join(base, "home");
      const root = join(base, "root");
      await Deno.mkdir(home);
      await Deno.mkdir(root);
      const mark = join(base, "ran");
      // The server's program as the session's start saw it: missing.
      noteMissing({ argv: ["./srv/server.sh"], cwd: root }, home);
      await using t = await testRuntime({
        cwd: root,
        env: {
          HOME: home,
          XDG_CONFIG_HOME: join(home, ".config"),
          XDG_STATE_HOME: join(home, ".local", "state"),
          XDG_CACHE_HOME: join(home, ".cache"),
          PATH: "/usr/local/bin:/usr/bin:/bin",
        },
        config: {
          shipped_tools: false,
          roots: [root],
          approval: "never",
          sandbox: { mode: "workspace-write" },
          hooks: { after_tool: [{ command: "sh ./hooks/after.sh" }] },
        },
      });
      try {
        const r = await runTool(t.rt, {
          name: "run",
          args: {
            command: `mkdir -p hooks srv && printf 'touch ${mark}\\n' > hooks/after.sh && ` +
              `printf '#!/bin/sh\\ntouch ${mark}\\n' > srv/server.sh && chmod +x srv/server.sh ` +
              `&& echo made`,
          },
        });
        assert.match(r.said, /^made$/m, r.said);
        // The call itself is done; its after_tool hook was the first chance to run the script.
        await runTool(t.rt, { name: "run", args: { command: "true" } });
        assert.equal(await Deno.lstat(mark).then(() => true, () => false), false);
        const line = t.warnings.find((w) => w.includes("not run"));
        assert.match(
          line ?? t.warnings.join("\n"),
          /^hook after_tool "sh \.\/hooks\/after\.sh" not run: .*hooks\/after\.sh did not exist when the session started/,
        );
        // The MCP server, missing at the start (as the runtime's first look noted it), now
        // there: its start is refused with the reason, one line.
        const warned: string[] = [];
        await mcpTools({
          servers: { planted: { command: "./srv/server.sh" } },
          configFile: undefined,
          cwd: root,
          env: { HOME: home, PATH: "/usr/bin:/bin" },
          spillDir: base,
          masker: new Masker([]),
          cachePath: join(base, "mcp-cache.json"),
          warn: (m) => void warned.push(m),
        });
        assert.match(
          warned.join("\n"),
          /MCP server "planted" not started: .*srv\/server\.sh did not exist when the session started/,
        );
        assert.equal(await Deno.lstat(mark).then(() => true, () => false), false);
      } finally {
        closeBodyProcesses();
        await closeMcpServers();
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
