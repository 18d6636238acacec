/**
 * Start-up (issue 8): a warm `magi tools --json` loads none of the heavy packages — not the
 * provider SDKs, the MCP SDK, the Lua engine, Ajv, the shell parser or the diff library. The
 * modules a run evaluated are read from Deno's coverage output (counted, not timed).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RUN_FLAGS } from "../scripts/permissions.ts";
import { DENO_DIR, REPO, tempDir } from "./helpers.ts";

/** The URLs of the modules one `magi ARGS…` run evaluated. */
async function evaluated(home: string, args: string[]): Promise<string[]> {
  const coverage = join(home, `coverage-${crypto.randomUUID()}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...RUN_FLAGS,
      "--quiet",
      `--coverage=${coverage}`,
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "main.ts"),
      ...args,
    ],
    cwd: home,
    env: {
      DENO_DIR,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const urls: string[] = [];
  for (const entry of Deno.readDirSync(coverage)) {
    urls.push(JSON.parse(Deno.readTextFileSync(join(coverage, entry.name))).url);
  }
  return urls;
}

Deno.test("a warm magi tools --json loads no provider, MCP, Lua, Ajv, shell-parser or diff code", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools", "greet");
  await Deno.mkdir(tools, { recursive: true });
  await Deno.writeTextFile(
    join(tools, "greet"),
    "#!/bin/sh\nprintf 'greet: print a greeting\\nUsage: greet NAME\\n'\n",
    { mode: 0o755 },
  );
  await Deno.writeTextFile(
    join(tools, "schema.json"),
    JSON.stringify({ type: "object", properties: { name: { type: "string" } } }),
  );
  const args = ["tools", "--json", "--tools-dir", join(dir.path, "tools")];
  const cold = await evaluated(dir.path, args);
  assert.ok(cold.some((u) => u.includes("/ajv@")), "a cold start checks schema.json with Ajv");
  const warm = await evaluated(dir.path, args);
  assert.ok(
    warm.some((u) => u.endsWith("/lib/runtime/runtime.ts")),
    "coverage lists magi's modules",
  );
  const heavy = [
    "@modelcontextprotocol",
    "openai@",
    "anthropic",
    "wasmoon@",
    "/ajv@",
    "mvdan-sh@",
    "/diff@",
    "zod@",
    "/lib/agent/loop.ts",
  ];
  const loaded = warm.filter((u) => heavy.some((h) => u.includes(h)));
  assert.deepEqual(loaded, []);
});
