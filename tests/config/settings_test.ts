import assert from "node:assert/strict";
import { join } from "node:path";
import { type Config, ConfigError, loadConfig } from "../../lib/config/load.ts";
import { type KeyName, KEYS, type Settings, TABLE } from "../../lib/config/keys.ts";
import { isValid } from "../../lib/core/json_schema.ts";
import { keyRow } from "../../lib/config/doc_rows.ts";
import { tempDir } from "../helpers.ts";

/** True when A and B are the same type (checked by `deno check`/`deno test`, not at run time). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true
  : false;
const typed = <T extends true>(_: T) => {};

// Every key of the table is a field of Settings, and nothing else is.
typed<Same<keyof Settings, keyof typeof KEYS>>(true);
// A key with a default is always set; one without may be undefined.
typed<Same<Settings["limits.said_bytes"], number>>(true);
typed<Same<Settings["approval"], "ask" | "never">>(true);
typed<Same<Settings["provider"], string | undefined>>(true);
typed<Same<Settings["secrets.env"], readonly string[]>>(true);
typed<Same<Settings["sandbox.mode"], "read-only" | "workspace-write" | "off" | undefined>>(true);

function writeConfig(dir: string, text: string): string {
  const file = join(dir, "c.jsonc");
  Deno.writeTextFileSync(file, text);
  return file;
}

Deno.test("loadConfig(): the built settings are frozen all the way down", async () => {
  await using dir = await tempDir();
  const file = writeConfig(
    dir.path,
    JSON.stringify({
      timeout_seconds: 30,
      secrets: { env: ["MY_TOKEN"] },
      mcp_servers: { fs: { command: "srv", args: ["--root", "/"], env: { A: "b" } } },
    }),
  );
  const config: Config = loadConfig({ cwd: dir.path, env: {}, configFlag: file });
  // Written through an untyped view, as a careless reader would: each write throws (strict mode).
  const loose = config as unknown as {
    values: Record<string, unknown>;
    origins: Record<string, string>;
    notes: string[];
    files: string[];
  };
  assert.throws(() => (loose.values.timeout_seconds = 1), TypeError);
  assert.throws(() => (loose.values.brand_new = 1), TypeError);
  assert.throws(() => delete loose.values.timeout_seconds, TypeError);
  assert.throws(() => (loose.values["secrets.env"] as string[]).push("X"), TypeError);
  const servers = loose.values.mcp_servers as Record<string, { args: string[] }>;
  assert.throws(() => servers.fs.args.push("--evil"), TypeError);
  assert.throws(() => (loose.origins.timeout_seconds = "--flag"), TypeError);
  assert.throws(() => loose.notes.push("x"), TypeError);
  assert.throws(() => loose.files.pop(), TypeError);
  // Defaults are shared by every load: frozen too, so one load cannot change the next one's.
  assert.throws(() => (loose.values.trusted_projects as string[]).push("/"), TypeError);
  assert.equal(config.values.timeout_seconds, 30);
  assert.deepEqual(config.values["secrets.env"], ["MY_TOKEN"]);
  assert.deepEqual(loadConfig({ cwd: dir.path, env: {} }).values.trusted_projects, []);
});

Deno.test("loadConfig(): every key of the table has its field, and each default passes its schema", async () => {
  await using dir = await tempDir();
  const config = loadConfig({ cwd: dir.path, env: {} });
  assert.deepEqual(Object.keys(config.values).sort(), Object.keys(KEYS).sort());
  for (const [name, spec] of Object.entries(TABLE)) {
    const value = config.values[name as KeyName];
    if (spec.default === undefined) {
      assert.equal(value, undefined, name);
      assert.equal(config.origins[name], undefined, name);
    } else {
      assert.deepEqual(value, spec.default, name);
      assert.equal(config.origins[name], "default", name);
      assert.ok(isValid(spec.schema, spec.default), `the default of "${name}" fails its schema`);
    }
  }
});

/** One value of each key's type (absolute paths, so resolving them changes nothing). */
const SAMPLES: { [K in KeyName]: NonNullable<Settings[K]> } = {
  trusted_projects: ["/srv/project"],
  tools_dir: "/srv/tools",
  approval: "never",
  shipped_tools: false,
  timeout_seconds: 2.5,
  "display.lines": 7,
  prices: { "gpt-4o": { input: 2.5, output: 10, cached: 1.25 } },
  "limits.said_bytes": 2048,
  "limits.shown_bytes": 4096,
  "limits.image_bytes": 0,
  "limits.mcp_message_bytes": 65536,
  "limits.spill_bytes": 4096,
  "limits.write_bytes": 1024,
  "limits.lua_memory_bytes": 1048576,
  lua_dirs: ["/srv/lua", "/srv/lua2"],
  peers: { casper: "/usr/local/bin/casper" },
  "secrets.env": ["MY_TOKEN"],
  "secrets.values": ["sample-secret-value"],
  "secrets.ignore": ["SORT_KEY"],
  "secrets.pass_env": ["OPENAI_API_KEY"],
  roots: ["/srv"],
  spill_dir: "/srv/spill",
  providers: { local: { kind: "openai", base_url: "http://127.0.0.1:1/v1", model: "m" } },
  provider: "local",
  sessions_dir: "/srv/sessions",
  "sandbox.mode": "read-only",
  "sandbox.network": ["*.npmjs.org"],
  "sandbox.deny_read": ["~/.aws"],
  "sandbox.unix_sockets": true,
  policy: { rules: [{ tool: "run", command: "git status *", decision: "allow" }] },
  system_prompt: "You are terse.",
  system_prompt_file: "/srv/prompt.md",
  hooks: { before_tool: [{ command: "/bin/true", matcher: "run", sandbox: false }] },
  "agents.max_depth": 1,
  "agents.summary_bytes": 256,
  "mcp.audience_pair": true,
  "mcp.plain_names": true,
  mcp_servers: { fs: { command: "srv", args: ["--root", "/"], start: "lazy" } },
};

Deno.test("loadConfig(): a value of each key's type is accepted by its schema and read back as written", async () => {
  await using dir = await tempDir();
  const file: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(SAMPLES)) {
    const [group, leaf] = name.split(".");
    if (leaf === undefined) file[name] = value;
    else file[group] = { ...(file[group] as object | undefined), [leaf]: value };
  }
  const config = loadConfig({
    cwd: dir.path,
    env: {},
    configFlag: writeConfig(dir.path, JSON.stringify(file)),
  });
  for (const name of Object.keys(TABLE)) {
    assert.deepEqual(config.values[name as KeyName], SAMPLES[name as KeyName], name);
  }
});

Deno.test("loadConfig(): a bad value costs only itself: one line naming the file and that key", async () => {
  await using dir = await tempDir();
  const good = { timeout_seconds: 30, limits: { shown_bytes: 4096 }, provider: "local" };
  const before = loadConfig({
    cwd: dir.path,
    env: {},
    configFlag: writeConfig(dir.path, JSON.stringify(good)),
  });
  const file = writeConfig(
    dir.path,
    JSON.stringify({ ...good, limits: { ...good.limits, said_bytes: -1 } }),
  );
  assert.throws(() => loadConfig({ cwd: dir.path, env: {}, configFlag: file }), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(
      e.message,
      `config ${file}: key "limits.said_bytes": expected a whole number of bytes from 1024 to ` +
        "67108864 (64 MiB), got -1",
    );
    return true;
  });
  // The config built before is untouched, and the good keys load once the bad one goes.
  assert.equal(before.values.timeout_seconds, 30);
  assert.equal(before.values["limits.said_bytes"], 16384);
  writeConfig(dir.path, JSON.stringify(good));
  const after = loadConfig({ cwd: dir.path, env: {}, configFlag: file });
  assert.equal(after.values["limits.shown_bytes"], 4096);
  assert.equal(after.values.provider, "local");
});

Deno.test("loadConfig(): --tools-dir folders come first when the config is built, a folder once", async () => {
  await using dir = await tempDir();
  const tools = join(dir.path, "tools");
  const more = join(dir.path, "more");
  await Deno.mkdir(tools);
  await Deno.mkdir(more);
  const file = writeConfig(dir.path, JSON.stringify({ tools_dir: ["tools", "more"] }));
  const config = loadConfig({
    cwd: dir.path,
    env: {},
    configFlag: file,
    toolsDirs: ["more", "flag"],
  });
  assert.deepEqual(config.values.tools_dir, [more, join(dir.path, "flag"), tools]);
  assert.equal(config.origins.tools_dir, `--tools-dir, then ${file}`);
  assert.ok(Object.isFrozen(config.values.tools_dir));
});

Deno.test("the README's Config keys table has each key's row from the key table", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const cells = (line: string) => line.split("|").slice(1, -1).map((c) => c.trim());
  const rows = new Map(
    readme.split("\n").filter((l) => l.startsWith("| `")).map((l) => [cells(l)[0], cells(l)]),
  );
  for (const name of Object.keys(TABLE)) {
    assert.deepEqual(rows.get(`\`${name}\``), keyRow(name), `README row of "${name}"`);
  }
});
