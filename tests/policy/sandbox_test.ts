/**
 * The sandbox (config `policy.sandbox`): with bwrap, `run` and tools from a tools folder start
 * with the filesystem read-only except the roots and the temp folder; when bwrap cannot start,
 * commands are refused, never run unsandboxed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { setSocketLimits } from "../../lib/confinement/sandbox_paths.ts";
import { makeTool, tempDir, TESTDATA, testRuntime } from "../helpers.ts";
import { outsideDir } from "./sandbox_world.ts";

const TOOLS = join(TESTDATA, "policy", "sandbox-tools");
const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);

async function layout(dir: string) {
  const root = join(dir, "project");
  await Deno.mkdir(root);
  // Outside the roots and outside the temp folder (which the sandbox keeps writable), whether
  // or not HOME or the checkout lie under it.
  const outside = await outsideDir();
  return { root, outside };
}

Deno.test({
  name: "sandbox: a tool and a run line cannot write outside the roots; inside they can",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const { root, outside } = await layout(dir.path);
    try {
      for (const on of [false, true]) {
        await using t = await testRuntime({
          cwd: root,
          toolsDirs: [TOOLS],
          env: { OUT: outside },
          // The gate would refuse the outside path in the arguments first; this test is
          // about the sandbox, the line behind it.
          config: {
            shipped_tools: false,
            roots: [root],
            // The person's own allow rule: a model's call of it runs in workspace-write.
            policy: {
              sandbox: on,
              disable: ["outside-roots-tools"],
              rules: [{ tool: "write-there", decision: "allow" }],
            },
          },
        });
        const target = join(outside, `tool-${on}`);
        const tool = await runTool(t.rt, { name: "write-there", args: { args: [target] } });
        const inside = await runTool(t.rt, {
          name: "write-there",
          args: { args: [join(root, `in-${on}`)] },
        });
        assert.equal(inside.is_error, false, inside.said);
        // A model's call runs sandboxed by default now (SPEC S8): policy.sandbox off too.
        assert.equal(tool.is_error, true);
        assert.match(tool.said, /Read-only file system/);
        if (on) {
          // A person's run line (ask is approved) that the policy cannot read statically.
          const line = await runTool(t.rt, {
            name: "run",
            args: { command: `echo hi > "$OUT/run-line"` },
            caller: "person",
          });
          assert.equal(line.is_error, true);
          assert.match(line.said, /Read-only file system/);
        }
      }
      const names = [...Deno.readDirSync(outside)].map((e) => e.name).sort();
      assert.deepEqual(names, []);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test("sandbox on but bwrap cannot start: commands are refused, not run unsandboxed", async () => {
  await using dir = await tempDir();
  const empty = join(dir.path, "empty-bin");
  await Deno.mkdir(empty);
  await using t = await testRuntime({
    cwd: dir.path,
    toolsDirs: [TOOLS],
    env: { PATH: `${empty}:/nonexistent` },
    config: { shipped_tools: false, roots: [dir.path], policy: { sandbox: true } },
  });
  const target = join(dir.path, "made");
  const r = await runTool(t.rt, { name: "write-there", args: { args: [target] } });
  assert.equal(r.is_error, true);
  // A model's call the judge allows is asked about instead; with no one to ask, refused.
  assert.match(
    r.said,
    /no sandbox can start here \(bwrap is not on PATH.*it would run unsandboxed/,
  );
  await assert.rejects(Deno.stat(target));
});

Deno.test({
  name: "sandbox: a Lua body's magi.exec runs inside it too",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const { root, outside } = await layout(dir.path);
    try {
      await using t = await testRuntime({
        cwd: root,
        env: { OUT: outside },
        config: {
          shipped_tools: false,
          roots: [root],
          lua_dirs: [join(TESTDATA, "lua", "basic")],
          // `sh` allowed by rule: the Lua Worker itself may start it, and still must not.
          policy: {
            sandbox: true,
            rules: [{ tool: "run", command: ["sh *"], decision: "allow" }],
          },
        },
      });
      // The person's own call approves a line the policy cannot read statically.
      const line = (text: string) =>
        runTool(t.rt, { name: "lua_exec", args: { line: text, check: true }, caller: "person" });
      const away = await line(`echo hi > "$OUT/lua-line"`);
      assert.equal(away.is_error, true, away.said);
      assert.match(away.said, /Read-only file system/);
      const here = await line(`echo hi > "${root}/lua-line" && echo wrote`);
      assert.equal(here.is_error, false, here.said);
      assert.match(here.said, /out=\[wrote\]/);
      assert.deepEqual([...Deno.readDirSync(outside)], []);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: a peer's tool runs inside it too",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const { root, outside } = await layout(dir.path);
    try {
      for (const on of [false, true]) {
        await using t = await testRuntime({
          cwd: root,
          env: { OUT: outside },
          config: {
            shipped_tools: false,
            roots: [root],
            peers: { testpeer: join(TESTDATA, "peers", "test-peer") },
            policy: { sandbox: on },
          },
        });
        const r = await runTool(t.rt, { name: "peer_write", args: {}, caller: "person" });
        if (on) {
          assert.equal(r.is_error, true, r.said);
          assert.match(r.said, /Read-only file system/);
        } else assert.equal(r.said, "wrote\n");
        await Deno.remove(join(outside, "peer-write")).catch(() => {});
      }
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name: "sandbox: no network unless asked — a server on loopback is out of reach",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("reached\n"),
    );
    try {
      const tools = join(dir.path, "tools");
      await makeTool(
        tools,
        "net-probe",
        `#!/bin/bash
if [ "$1" = "--help" ]; then echo "net-probe - fetch from a loopback port"; exit 0; fi
exec 3<>/dev/tcp/127.0.0.1/${server.addr.port} || exit 7
printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3
cat <&3
`,
      );
      const reach = async (sandbox: unknown) => {
        await using t = await testRuntime({
          cwd: dir.path,
          toolsDirs: [tools],
          config: { shipped_tools: false, roots: [dir.path], policy: { sandbox } },
        });
        return await runTool(t.rt, { name: "net-probe", args: {}, caller: "person" });
      };
      const closed = await reach(true);
      assert.equal(closed.is_error, true, closed.said);
      assert.ok(!closed.said.includes("reached"), closed.said);
      const open = await reach({ network: true });
      assert.equal(open.is_error, false, open.said);
      assert.match(open.said, /reached/);
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "sandbox: with unix sockets refused, a crowd of folders (one call could make) stops no " +
    "later call",
  ignore: (await sandboxProblem()) !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    for (const n of ["a", "b", "c", "d"]) await Deno.mkdir(join(dir.path, n));
    setSocketLimits({ sockets: 2000, folders: 2 });
    try {
      await using t = await testRuntime({
        cwd: dir.path,
        config: {
          shipped_tools: false,
          roots: [dir.path],
          approval: "never",
          sandbox: { mode: "workspace-write" },
        },
      });
      const r = await runTool(t.rt, { name: "run", args: { command: "echo ok > made; cat made" } });
      assert.equal(r.is_error, false, r.said);
      assert.match(r.said, /^ok$/m);
    } finally {
      setSocketLimits({ sockets: 2000, folders: 20_000 });
    }
  },
});

Deno.test({
  name: "sandbox: a search for sockets that would stop part-way refuses the call, never runs it",
  ignore: (await sandboxProblem()) !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    // More folders than the search may read: the system temp folder holds at least this one.
    for (const n of ["a", "b", "c", "d"]) await Deno.mkdir(join(dir.path, n));
    setSocketLimits({ sockets: 2000, folders: 2 });
    try {
      await using t = await testRuntime({
        cwd: dir.path,
        toolsDirs: [TOOLS],
        config: {
          shipped_tools: false,
          roots: [dir.path],
          sandbox: { mode: "workspace-write" },
        },
      });
      const target = join(dir.path, "made");
      const r = await runTool(t.rt, {
        name: "write-there",
        args: { args: [target] },
        caller: "person",
      });
      assert.equal(r.is_error, true, r.said);
      assert.match(r.said, /Cannot start the sandbox: more than 2 folders under .* unix sockets/);
      await assert.rejects(Deno.stat(target));
    } finally {
      setSocketLimits({ sockets: 2000, folders: 20_000 });
    }
  },
});
