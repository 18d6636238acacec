import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir, TESTDATA, writeConfig } from "../helpers.ts";

const SECRET = "lua-transport-secret-4711";

async function setup(dir: string): Promise<string> {
  await Deno.writeTextFile(
    join(dir, "big.txt"),
    [SECRET, ...Array.from({ length: 3000 }, (_, i) => `row ${i + 1}`)].join("\n") + "\n",
  );
  return await writeConfig(dir, {
    lua_dirs: [join(TESTDATA, "lua", "transports")],
    peers: { testpeer: join(TESTDATA, "peers", "test-peer") },
    shipped_tools: false,
    limits: { said_bytes: 2048, shown_bytes: 4096 },
  });
}

interface Result {
  name: string;
  said: string;
  shown: string;
  is_error: boolean;
  spill: string | null;
}

async function call(dir: string, config: string, name: string, args: unknown): Promise<Result> {
  const run = await magi(["call", "--json", "--config", config, name, JSON.stringify(args)], {
    cwd: dir,
    home: dir,
    env: { TEST_API_TOKEN: SECRET },
  });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  return JSON.parse(run.stdout);
}

async function assertPipelined(r: Result): Promise<void> {
  assert.equal(r.is_error, false, r.said);
  assert.ok(r.said.startsWith("$TEST_API_TOKEN\n"), r.said.slice(0, 200));
  assert.ok(!r.said.includes(SECRET) && !r.shown.includes(SECRET));
  assert.ok(r.said.length < 2600, `said is ${r.said.length} characters`);
  assert.ok(r.spill !== null, "no spill file");
  assert.ok(r.said.includes(r.spill!), "the note does not name the spill file");
  const whole = await Deno.readTextFile(r.spill!);
  assert.ok(whole.startsWith("$TEST_API_TOKEN\n") && !whole.includes(SECRET));
}

Deno.test("each transport through magi call --json: masked, bounded, spilled", async (t) => {
  await using dir = await tempDir();
  const config = await setup(dir.path);
  const args = { name: "TEST_API_TOKEN", lines: 3000 };

  await t.step("lua", async () => {
    const r = await call(dir.path, config, "t_lua", args);
    await assertPipelined(r);
    assert.equal(r.shown, "value of TEST_API_TOKEN");
  });
  await t.step("command", async () => {
    const r = await call(dir.path, config, "t_command", args);
    await assertPipelined(r);
    assert.match(r.said, /\n3000\n$/);
  });
  await t.step("builtin", async () => {
    const r = await call(dir.path, config, "t_builtin", { path: "big.txt", limit: 3001 });
    assert.equal(r.is_error, false, r.said);
    assert.ok(r.said.includes("$TEST_API_TOKEN") && !r.said.includes(SECRET), r.said.slice(0, 200));
    assert.ok(r.said.length < 2600 && r.spill !== null);
  });
  await t.step("casper", async () => {
    const r = await call(dir.path, config, "t_casper", args);
    await assertPipelined(r);
  });
});

Deno.test("magi tools --json lists Lua, command, casper, builtin and peer tools side by side", async () => {
  await using dir = await tempDir();
  const config = await setup(dir.path);
  const run = await magi(["tools", "--json", "--config", config], { cwd: dir.path });
  assert.equal(run.code, 0, run.stderr);
  const tools = JSON.parse(run.stdout) as Record<string, unknown>[];
  const byName = new Map(tools.map((t) => [t.name as string, t]));
  for (const name of ["t_lua", "t_command", "t_builtin", "t_casper", "peer_echo", "read"]) {
    assert.deepEqual(Object.keys(byName.get(name) ?? {}), ["name", "description", "parameters"]);
  }
  const read = byName.get("read") as { parameters: unknown };
  assert.deepEqual(byName.get("t_builtin"), {
    name: "t_builtin",
    description: "Read a file (the read builtin, described again)",
    parameters: read.parameters,
  });
  assert.deepEqual(byName.get("t_command"), {
    name: "t_command",
    description: "A variable and many lines, from sh through the command transport",
    parameters: {
      type: "object",
      properties: { name: { type: "string" }, lines: { type: "integer" } },
      required: ["name", "lines"],
    },
  });
  assert.ok(!run.stdout.includes("x-magi"));
  assert.match(
    run.stderr,
    /peer "testpeer" .*tool #7 left out: tool "peer_nodesc" has no "description"/,
  );
});
