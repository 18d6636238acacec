import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { magi, REPO, tempDir, TESTDATA, testRuntime } from "../helpers.ts";

const PEERS = join(TESTDATA, "peers");

Deno.test("a peer whose tools --json is broken costs one stderr line; other peers still load", async () => {
  await using t = await testRuntime({
    config: {
      peers: { broken: join(PEERS, "broken-peer"), testpeer: join(PEERS, "test-peer") },
      shipped_tools: false,
    },
  });
  const broken = t.warnings.filter((w) => w.includes("broken-peer"));
  assert.equal(broken.length, 1, t.warnings.join("\n"));
  assert.match(broken[0], /peer "broken" .* gives no tools: "tools --json" printed no JSON/);
  const echo = t.rt.registry.get("peer_echo");
  assert.equal(echo?.origin.source, "peer");
  assert.deepEqual(echo?.declaration, {
    name: "peer_echo",
    description: "Echo the arguments back",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  });
});

Deno.test("peer results: JSON {said, shown}, plain text, a failing exit status; a Lua file can describe a peer tool again", async () => {
  await using t = await testRuntime({
    config: {
      peers: { testpeer: join(PEERS, "test-peer") },
      lua_dirs: [join(TESTDATA, "lua", "peers")],
      shipped_tools: false,
    },
  });
  const split = await runTool(t.rt, { name: "casper_split", args: {} });
  assert.equal(split.said, "short");
  assert.equal(split.shown, "the long rendering for people");
  const fail = await runTool(t.rt, { name: "casper_fail", args: {} });
  assert.equal(fail.is_error, true);
  assert.match(fail.said, /exit status 3\]\n\[stderr\]\nit broke/);
  const echo = t.rt.registry.get("peer_echo");
  assert.equal(echo?.origin.source, "lua");
  assert.equal(echo?.declaration.description, "The peer's echo, described again");
  assert.deepEqual(echo?.declaration.parameters.required, ["text"]);
  assert.equal(t.warnings.filter((w) => w.includes("peer_echo")).length, 0, t.warnings.join("\n"));
  const r = await runTool(t.rt, { name: "peer_echo", args: { text: "hi" } });
  assert.equal(r.said, '{"text":"hi"}\n');
  const bad = await runTool(t.rt, { name: "peer_echo", args: {} });
  assert.match(bad.said, /field "text" is required/);
});

Deno.test("the default peer casper is found on PATH outside the roots and the temp folder; its list is cached until the program changes", async () => {
  // magi runs with a temp folder and a root of its own, so `bin` lies outside both.
  await using base = await tempDir();
  const bin = join(base.path, "bin");
  const root = join(base.path, "root");
  const tmp = join(base.path, "tmp");
  for (const d of [bin, root, tmp]) await Deno.mkdir(d);
  const log = join(base.path, "listed.log");
  const casper = join(bin, "casper");
  await Deno.writeTextFile(
    casper,
    `#!/bin/sh\necho listed >> "${log}"\n` +
      `echo '[{"name":"casper_hello","description":"Say hello"}]'\n`,
    { mode: 0o755 },
  );
  const config = join(base.path, "config.json");
  await Deno.writeTextFile(config, JSON.stringify({ shipped_tools: false }));
  const opts = {
    cwd: root,
    home: join(base.path, "home"),
    env: { PATH: `${bin}:${Deno.env.get("PATH")}`, TMPDIR: tmp },
  };
  for (let i = 0; i < 2; i++) {
    const run = await magi(["tools", "--config", config], opts);
    assert.match(run.stdout, /casper_hello +peer/, run.stdout + run.stderr);
  }
  assert.equal(await Deno.readTextFile(log), "listed\n");
});

Deno.test("the example peer in tools/ answers disk_free (said one line, shown the table) and load_average", async () => {
  await using t = await testRuntime({
    config: {
      peers: { sysinfo: join(REPO, "tools", "sysinfo-peer") },
      shipped_tools: false,
      policy: { rules: [{ tool: "*", source: "peer", decision: "allow" }] },
    },
  });
  assert.deepEqual(t.warnings, []);
  const disk = await runTool(t.rt, { name: "disk_free", args: { path: t.home } });
  assert.equal(disk.is_error, false, disk.said);
  assert.match(disk.said, /^\d+% used, \S+ free on \/\S*$/);
  assert.match(disk.shown, /^Filesystem +Size +Used +Avail +Use% +Mounted on\n/);
  const load = await runTool(t.rt, { name: "load_average", args: {} });
  assert.match(load.said, /^load [\d.]+ [\d.]+ [\d.]+ on \d+ CPUs\n$/);
});

Deno.test("a peer's own tool is bounded and spilled by the pipeline like any other", async () => {
  await using t = await testRuntime({
    config: {
      peers: { testpeer: join(PEERS, "test-peer") },
      shipped_tools: false,
      limits: { said_bytes: 2048 },
      policy: { rules: [{ tool: "*", source: "peer", decision: "allow" }] },
    },
  });
  const r = await runTool(t.rt, { name: "peer_big", args: {} });
  assert.equal(r.is_error, false, r.said);
  assert.ok(r.said.length < 2600 && r.spill !== null && r.said.includes(r.spill));
  assert.ok((await Deno.readTextFile(r.spill)).endsWith("\n20000\n"));
});
