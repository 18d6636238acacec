/**
 * The door (SPEC S8.1) end to end: `magi run --auto` against a scripted model fixes a failing
 * test — it edits a file and runs the project's tests inside the workspace-write sandbox —
 * while writing outside the roots, pushing past the person's deny rule, reaching the network
 * and reading the SSH key are refused or fail, and the model is told why. Also: what
 * `magi policy explain` says, the no-sandbox fallback, `--auto` without a sandbox, and an MCP
 * client's calls are not the person's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig } from "../agent/setup.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../lib/mcp/server.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { testRuntime } from "../helpers.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };
const KEY = "FAKE-ED25519-PRIVATE-KEY-3c9a1f77-never-shown";
const why = await sandboxProblem();
if (why) console.log(`door sandbox tests skipped: ${why}`);

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${text}`);
  return text;
}

/**
 * A project with a failing test, a git repository with a bare remote beside it, an explicit
 * HOME holding an SSH key, and a folder outside the roots.
 */
async function layout(dir: string) {
  const home = join(dir, "home");
  const project = join(dir, "project");
  const outside = join(dir, "outside");
  const remote = join(dir, "remote.git");
  for (const d of [join(home, ".ssh"), project, outside]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "id_ed25519"), KEY + "\n");
  await Deno.writeTextFile(join(project, "add.sh"), "echo $(( $1 - $2 ))\n");
  await Deno.writeTextFile(
    join(project, "test.sh"),
    'got=$(sh add.sh 2 3)\nif [ "$got" = 5 ]; then echo "test passed" > test-result.txt; ' +
      'echo "1 test passed"; else echo "FAIL: add 2 3 gave $got"; exit 1; fi\n',
  );
  await git(dir, "init", "-q", "--bare", remote);
  await git(project, "init", "-q", "-b", "main");
  await git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start");
  await git(project, "remote", "add", "origin", remote);
  return { home, project: await Deno.realPath(project), outside, remote };
}

Deno.test({
  name: "magi run --auto fixes the failing test; outside, push, network and the key are refused",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const { home, project, outside, remote } = await layout(dir.path);
    // A listener on loopback: reachable from magi, not from inside the sandbox.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const accepting = (async () => {
      for await (const conn of listener) conn.close();
    })();
    const calls = [
      { id: "c_test1", name: "run", args: { command: "sh test.sh" } },
      { id: "c_fix", name: "write", args: { path: "add.sh", content: "echo $(( $1 + $2 ))\n" } },
      { id: "c_test2", name: "run", args: { command: "sh test.sh" } },
      { id: "c_out", name: "write", args: { path: join(outside, "x.txt"), content: "x" } },
      { id: "c_push", name: "run", args: { command: "git push origin main" } },
      {
        id: "c_net",
        name: "run",
        args: { command: `curl -sS --max-time 5 http://127.0.0.1:${port}/` },
      },
      { id: "c_key1", name: "run", args: { command: "cat ~/.ssh/id_ed25519" } },
      { id: "c_key2", name: "run", args: { command: 'sh -c "cat $HOME/.ssh/id_ed25519"' } },
    ];
    await using server = scriptedServer("openai", [
      ...calls.map((c) => reply("openai", "", [c])),
      reply("openai", "Fixed add.sh; the test passes."),
    ]);
    const config = await agentConfig(dir.path, "openai", server.url, {
      roots: [project],
      policy: {
        rules: [{ id: "no-push", tool: "run", command: ["git push *"], decision: "deny" }],
      },
    });
    const run = await magi(
      ["run", "fix the failing test", "--auto", "--config", config],
      { cwd: project, env: { ...ENV, HOME: home } },
    );
    listener.close();
    await accepting.catch(() => {});
    assert.equal(run.code, 0, run.stderr);
    const results = toolResultsIn("openai", server.requests.at(-1)!);
    const said = Object.fromEntries(results.map((r) => [r.id, r.content]));
    assert.match(said.c_test1, /FAIL: add 2 3 gave -1/);
    assert.match(said.c_test2, /1 test passed/);
    assert.equal(await Deno.readTextFile(join(project, "add.sh")), "echo $(( $1 + $2 ))\n");
    assert.equal(await Deno.readTextFile(join(project, "test-result.txt")), "test passed\n");
    // Outside the roots: a deny rule, which --auto does not lift; the model is told which.
    assert.match(said.c_out, /denied by the policy — deny by rule "outside-roots" \(default\)/);
    await assert.rejects(Deno.stat(join(outside, "x.txt")));
    assert.match(said.c_push, /denied by the policy — deny by rule "no-push"/);
    assert.equal((await git(remote, "branch", "--list")).trim(), "");
    // The network: approved by --auto, but the sandbox has none.
    assert.match(said.c_net, /Failed to connect|Couldn't connect|exit status 7/);
    // The key: outside the roots for the judge; hidden inside the sandbox for a shell's cat.
    assert.match(said.c_key1, /denied by the policy — deny by rule "outside-roots"/);
    assert.match(said.c_key2, /No such file or directory|Permission denied|exit status 1/);
    for (const r of server.requests) assert.ok(!r.body.includes(KEY), "the key reached the model");
    // The person is told which rule refused and what would allow it.
    assert.match(run.stderr, /magi: refused run: deny by rule "no-push" \(.*\): .*git push/);
    assert.match(run.stderr, /refuses it/);
  },
});

Deno.test({
  name: "headless magi run without --auto cannot run the tests: no one to ask",
  ignore: why !== undefined,
  fn: async () => {
    await using dir = await tempDir();
    const { home, project } = await layout(dir.path);
    await using server = scriptedServer("openai", [
      reply("openai", "", [{ id: "c1", name: "run", args: { command: "sh test.sh" } }]),
      reply("openai", "Could not run the tests."),
    ]);
    const config = await agentConfig(dir.path, "openai", server.url, { roots: [project] });
    const run = await magi(["run", "fix the failing test", "--config", config], {
      cwd: project,
      env: { ...ENV, HOME: home },
    });
    assert.equal(run.code, 0, run.stderr);
    const [result] = toolResultsIn("openai", server.requests[1]);
    assert.match(result.content, /no person to approve it/);
    assert.match(
      run.stderr,
      /an allow rule in your config \(policy\.rules\) or --auto would run it/,
    );
  },
});

Deno.test("no sandbox here: said once at start-up; a silent allow is asked; --auto refuses to start", async () => {
  await using dir = await tempDir();
  const { home, project } = await layout(dir.path);
  // A PATH with no bwrap on it.
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  for (const p of ["sh", "bash", "ls", "cat", "git", "deno"]) {
    await Deno.symlink((await which(p))!, join(bin, p));
  }
  const env = { ...ENV, HOME: home, PATH: bin };
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "c1", name: "run", args: { command: "ls" } }]),
    reply("openai", "Listed."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url, { roots: [project] });
  const run = await magi(["run", "list", "--config", config], { cwd: project, env });
  assert.equal(run.code, 0, run.stderr);
  const notices = run.stderr.match(/magi: no sandbox: bwrap is not on PATH/g) ?? [];
  assert.equal(notices.length, 1, run.stderr);
  assert.match(run.stderr, /commands a model runs are asked about \(--sandbox off runs them/);
  const [ls] = toolResultsIn("openai", server.requests[1]);
  assert.match(ls.content, /no sandbox can start here .*it would run unsandboxed/);
  // --auto needs a sandbox …
  const auto = await magi(["run", "list", "--auto", "--config", config], { cwd: project, env });
  assert.equal(auto.code, 2);
  assert.match(auto.stderr, /--auto needs a working sandbox, and bwrap is not on PATH/);
  // … unless the person said --sandbox off: then it runs, unsandboxed.
  await using server2 = scriptedServer("openai", [
    reply("openai", "", [{ id: "c1", name: "run", args: { command: "sh test.sh" } }]),
    reply("openai", "Ran."),
  ]);
  const config2 = await agentConfig(dir.path, "openai", server2.url, { roots: [project] });
  const off = await magi(
    ["run", "test", "--auto", "--sandbox", "off", "--config", config2],
    { cwd: project, env },
  );
  assert.equal(off.code, 0, off.stderr);
  assert.doesNotMatch(off.stderr, /no sandbox:/);
  const [t] = toolResultsIn("openai", server2.requests[1]);
  assert.match(t.content, /FAIL: add 2 3 gave -1/);
});

Deno.test("magi policy explain gives the door's ruling and sandbox; a Lua body's execs are decided later", async () => {
  await using dir = await tempDir();
  const lua = join(dir.path, "lua");
  await Deno.mkdir(lua);
  await Deno.writeTextFile(
    join(lua, "tools.lua"),
    'magi.tool("pushy", { description = "pushes", run = function(args) ' +
      'return magi.exec("git", { "push" }) end })\n',
  );
  const config = join(dir.path, "config.jsonc");
  await Deno.writeTextFile(
    config,
    JSON.stringify({ shipped_tools: false, roots: [dir.path], lua_dirs: [lua] }),
  );
  const explain = (...args: string[]) =>
    magi(["policy", "explain", ...args, "--config", config], { cwd: dir.path });
  const ls = await explain("run", '{"command": "ls"}');
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, /^allow by rule "run-read-only" \(default\)/);
  assert.match(ls.stdout, /a model's call: allow; it runs in the read-only sandbox/);
  const make = await explain("run", '{"command": "make test"}');
  assert.match(
    make.stdout,
    /a model's call: ask; approved, it runs in the workspace-write sandbox/,
  );
  const pushy = await explain("pushy");
  assert.equal(pushy.code, 0, pushy.stderr);
  assert.match(pushy.stdout, /its Lua body's magi.exec calls are decided at exec time/);
  const json = JSON.parse((await explain("pushy", "--json")).stdout);
  assert.equal(json.door.execs, "decided at exec time");
});

Deno.test("an MCP client is its own caller: an ask is not approved as the person's would be", async () => {
  await using dir = await tempDir();
  await using tr = await testRuntime({ cwd: dir.path, config: { shipped_tools: false } });
  const server = createMcpServer(() => tr.rt);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "plain", version: "1.0.0" });
  await client.connect(b);
  try {
    const args = { path: join(dir.path, "a.txt"), content: "x" };
    const result = await client.callTool({ name: "write", arguments: args }) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match((result.content[0] as { text: string }).text, /no person to approve it/);
    await assert.rejects(Deno.stat(join(dir.path, "a.txt")));
    // The person's own call of the same is approved.
    const own = await runTool(tr.rt, { name: "write", args, caller: "person" });
    assert.equal(own.is_error, false, own.said);
  } finally {
    await client.close();
  }
});

async function which(name: string): Promise<string | undefined> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      const p = join(dir, name);
      if ((await Deno.stat(p)).isFile) return await Deno.realPath(p);
    } catch {
      // not here
    }
  }
  return undefined;
}
