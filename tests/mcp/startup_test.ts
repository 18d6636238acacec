/**
 * Start-up never waits on an MCP server: one that hangs (`sleep`, which never answers
 * `initialize`) and one that crashes (`sh -c "exit 3"`) cost one line each; a warm start
 * does not wait for them at all; a server ready late joins the registry when it is; and a
 * server's `tools/list_changed` re-lists that one server, whose new tool can be called at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { closeMcpServers, onMcpToolsChanged } from "../../lib/sources/mcp/client.ts";
import { magi, magiArgs, tempDir, testRuntime, writeConfig } from "../helpers.ts";
import { FIXTURE } from "./servers.ts";

const HANG = { command: "sleep", args: ["600"], connect_timeout_seconds: 0.5 };
const CRASH = { command: "sh", args: ["-c", "echo broken >&2; exit 3"] };

/** The next change of `server`'s tools. */
function changeOf(server: string): Promise<void> {
  const { promise, resolve } = Promise.withResolvers<void>();
  const stop = onMcpToolsChanged((name) => {
    if (name === server) (stop(), resolve());
  });
  return promise;
}

Deno.test({
  name: "a hung and a crashed server cost one line each; a warm start does not wait for them",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using home = await tempDir();
    const env = { XDG_CACHE_HOME: join(home.path, "cache") };
    const config = {
      shipped_tools: false,
      mcp_servers: { hang: HANG, crash: CRASH, fixture: FIXTURE },
    };
    try {
      const started = performance.now();
      {
        await using cold = await testRuntime({ config, env });
        const coldMs = performance.now() - started;
        assert.ok(cold.rt.registry.get("fixture__pid"), cold.warnings.join("\n"));
        const hang = cold.warnings.filter((w) => w.includes('"hang"'));
        const crash = cold.warnings.filter((w) => w.includes('"crash"'));
        assert.deepEqual(hang, [
          'MCP server "hang" not ready within 0.5 s; its tools join when it is',
        ]);
        assert.equal(crash.length, 1, cold.warnings.join("\n"));
        assert.match(crash[0], /MCP server "crash" left out: .*exit status 3.*broken/);
        assert.ok(coldMs < 10_000, `a cold start took ${coldMs} ms`);
        await closeMcpServers();
      }
      await using warm = await testRuntime({ config, env });
      assert.ok(warm.rt.registry.get("fixture__pid"));
      const lines = warm.warnings.filter((w) => /"(hang|crash)"/.test(w));
      assert.equal(lines.length, 2, warm.warnings.join("\n"));
      assert.match(lines.join("\n"), /"hang" left out for now: at its last start it was not ready/);
      assert.match(lines.join("\n"), /"crash" left out for now: at its last start .*exit status 3/);
      // The cached fixture is reached at its first call.
      const result = await runTool(warm.rt, { caller: "person", name: "fixture__pid", args: {} });
      assert.equal(result.is_error, false, result.said);
    } finally {
      await closeMcpServers();
    }
  },
});

Deno.test("a server ready after connect_timeout_seconds joins the registry when it is", async () => {
  await using home = await tempDir();
  const env = { XDG_CACHE_HOME: join(home.path, "cache") };
  const late = { ...FIXTURE, connect_timeout_seconds: 0.01 };
  const joined = changeOf("late");
  await using tr = await testRuntime({
    config: { shipped_tools: false, mcp_servers: { late } },
    env,
  });
  try {
    assert.deepEqual(tr.warnings.filter((w) => w.includes('"late"')), [
      'MCP server "late" not ready within 0.01 s; its tools join when it is',
    ]);
    await joined;
    const result = await runTool(tr.rt, { caller: "person", name: "late__pid", args: {} });
    assert.equal(result.is_error, false, result.said);
    assert.match(result.said, /^\d+/);
  } finally {
    await closeMcpServers();
  }
});

Deno.test("tools/list_changed re-lists that one server; its new tool is callable at once", async () => {
  await using home = await tempDir();
  const pids = (name: string) => join(home.path, `${name}.pids`);
  const server = (name: string) => ({ ...FIXTURE, env: { FIXTURE_PID_FILE: pids(name) } });
  await using tr = await testRuntime({
    config: { shipped_tools: false, mcp_servers: { a: server("a"), b: server("b") } },
  });
  const { rt } = tr;
  const call = async (name: string) => {
    const result = await runTool(rt, { caller: "person", name, args: {} });
    assert.equal(result.is_error, false, result.said);
    return result.said;
  };
  try {
    const bBefore = await call("b__pid");
    assert.equal(rt.registry.get("a__extra"), undefined);
    const changed = changeOf("a");
    await call("a__grow");
    await changed;
    assert.match(await call("a__extra"), /extra here/);
    assert.equal(await call("b__pid"), bBefore, "b was not restarted");
    for (const name of ["a", "b"]) {
      const started = (await Deno.readTextFile(pids(name))).trim().split("\n");
      assert.equal(started.length, 1, `${name} started ${started.length} times`);
    }
    assert.ok(rt.registry.get("read"), "the other sources' tools stay");
  } finally {
    await closeMcpServers();
  }
});

/** The fastest of `n` runs of `fn`, in ms. */
async function fastest(n: number, fn: () => Promise<void>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/** Milliseconds from starting `magi mcp` to its answer to `initialize`. */
async function initializeMs(home: string, config: string): Promise<number> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: magiArgs(["mcp", "--config", config]),
    cwd: home,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "magi-test", version: "1.0.0" });
  const t0 = performance.now();
  await client.connect(transport);
  const ms = performance.now() - t0;
  await client.close();
  return ms;
}

Deno.test({
  name: "with a hung and a crashed server, a warm `magi tools` and `magi mcp`'s initialize " +
    "take about their time without them",
  sanitizeResources: false,
  fn: async () => {
    await using home = await tempDir();
    const plain = await writeConfig(join(home.path), {
      shipped_tools: false,
      mcp_servers: { fixture: FIXTURE },
    });
    const brokenDir = join(home.path, "broken");
    await Deno.mkdir(brokenDir);
    const broken = await writeConfig(brokenDir, {
      shipped_tools: false,
      mcp_servers: { fixture: FIXTURE, hang: HANG, crash: CRASH },
    });
    const tools = (config: string) => async () => {
      const run = await magi(["tools", "--config", config], { home: home.path });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /fixture__pid/);
    };
    // Cold runs fill the cache (the hung server is waited for 0.5 s, once).
    await tools(plain)();
    await tools(broken)();
    const without = await fastest(3, tools(plain));
    const withThem = await fastest(3, tools(broken));
    const initWithout = await fastest(3, async () => void await initializeMs(home.path, plain));
    const initWith = await fastest(3, async () => void await initializeMs(home.path, broken));
    // 1.2× is the aim (scripts/bench.ts reports the ratio); a shared machine's noise is allowed.
    assert.ok(withThem < without * 1.5 + 200, `magi tools: ${withThem} ms vs ${without} ms`);
    assert.ok(
      initWith < initWithout * 1.5 + 200,
      `initialize: ${initWith} ms vs ${initWithout} ms`,
    );
  },
});
