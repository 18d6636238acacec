/**
 * Coded errors: an error result carries `error: {code, message}` beside its prose (which the
 * model still reads), in the result object, in `magi call --json` and in MCP `_meta`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { callResult } from "../../lib/mcp/server.ts";
import { magi, makeTool, tempDir, testRuntime } from "../helpers.ts";

const POLICY = {
  rules: [
    { id: "no-rm", tool: "run", command: "rm *", decision: "deny" },
    { id: "any-run", tool: "run", decision: "allow" },
  ],
};

Deno.test("error results carry a code and a message; the prose is unchanged; success has none", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  await makeTool(
    tools,
    "nap",
    "#!/bin/sh\n[ \"$1\" = --help ] && { printf 'nap — sleep\\nnap\\n'; exit 0; }\nexec sleep 30\n",
  );
  await using t = await testRuntime({
    toolsDirs: [tools],
    config: { shipped_tools: false, policy: POLICY },
    cwd: dir.path,
  });
  const call = (name: string, args: unknown, signal?: AbortSignal) =>
    runTool(t.rt, { name, args: args as Record<string, unknown>, signal });
  const cases: [string, Promise<Awaited<ReturnType<typeof call>>>, string, RegExp][] = [
    ["unknown tool", call("nope", {}), "not_found", /unknown tool "nope"/],
    ["not JSON", call("read", "{oops"), "bad_arguments", /not JSON/],
    ["schema", call("read", { path: 3 }), "bad_arguments", /invalid arguments for "read"/],
    ["missing cwd", call("nap", { cwd: join(dir.path, "no-such") }), "bad_arguments", /cwd/],
    ["denied", call("run", { command: "rm x" }), "denied", /no-rm/],
    ["exit", call("run", { command: "ls no-such-file" }), "exit_status", /exit status 2/],
    ["timeout", call("nap", { timeout_seconds: 0.5 }), "timeout", /timed out after 0.5 s/],
  ];
  for (const [what, running, code, message] of cases) {
    const r = await running;
    assert.equal(r.is_error, true, what);
    assert.equal(r.error?.code, code, `${what}: ${r.said}`);
    assert.match(r.error!.message, message, what);
    assert.ok(!r.error!.message.includes("\n"), "one line");
    assert.ok(r.said.includes(r.error!.message), `${what}: the model reads the same prose`);
  }
  const stop = new AbortController();
  const napping = call("nap", {}, stop.signal);
  stop.abort();
  assert.equal((await napping).error?.code, "cancelled");
  const ok = await call("run", { command: "echo fine" });
  assert.equal(ok.is_error, false);
  assert.equal(ok.error, undefined);
});

Deno.test("the coded error is in magi call --json and in an MCP result's _meta", async () => {
  await using dir = await tempDir();
  const run = await magi(["call", "nope", "{}", "--json"], { cwd: dir.path });
  assert.equal(run.code, 1);
  const result = JSON.parse(run.stdout);
  assert.deepEqual(result.error, {
    code: "not_found",
    message: 'unknown tool "nope"; `magi tools` lists the tools',
  });
  const mcp = callResult(result);
  assert.equal(mcp.isError, true);
  assert.deepEqual(mcp._meta, { "magi/error": result.error });
  assert.equal(callResult({ ...result, is_error: false, error: undefined })._meta, undefined);
});
