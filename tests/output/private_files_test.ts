import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO_DIR, magiArgs, makeTool, tempDir } from "../helpers.ts";
import { reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig, makeTools, onlySession, script } from "../agent/setup.ts";

/** Every path under `dir` (itself included) with its mode; symbolic links are left out. */
function modesUnder(dir: string): Array<{ path: string; dir: boolean; mode: number }> {
  const out: Array<{ path: string; dir: boolean; mode: number }> = [];
  const visit = (path: string) => {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch {
      return; // not made
    }
    if (info.isSymlink) return;
    out.push({ path, dir: info.isDirectory, mode: info.mode! & 0o777 });
    if (info.isDirectory) { for (const e of Deno.readDirSync(path)) visit(join(path, e.name)); }
  };
  visit(dir);
  return out;
}

Deno.test("after magi run with a spill, everything magi wrote is 0600 (programs 0700) in 0700 folders, even with umask 000", async () => {
  await using dir = await tempDir();
  const tools = await makeTools(dir.path);
  await makeTool(
    tools,
    "many",
    script("many — print many lines", "many", 'seq 1 5000 | sed "s/^/line /"'),
  );
  await using server = scriptedServer("openai", [
    reply("openai", "", [{ id: "c1", name: "many", args: {} }]),
    reply("openai", "Done."),
  ]);
  const config = await agentConfig(dir.path, "openai", server.url, {
    limits: { said_bytes: 2048 },
  });
  const state = join(dir.path, "state");
  const cache = join(dir.path, "cache");
  const line = ["deno", ...magiArgs(["run", "go", "--config", config, "--tools-dir", tools])]
    .map((a) => `'${a}'`).join(" ");
  const out = await new Deno.Command("sh", {
    args: ["-c", `umask 000; exec ${line}`],
    cwd: dir.path,
    env: {
      FAKE_PROVIDER_KEY: "fake-provider-key-0001",
      XDG_STATE_HOME: state,
      XDG_CACHE_HOME: cache,
      XDG_CONFIG_HOME: join(dir.path, "config"),
      NO_COLOR: "1",
      DENO_DIR,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const session = onlySession(dir.path);
  const spill = [...Deno.readDirSync(join(session, "spill"))];
  assert.equal(spill.length, 1, "the output was spilled");
  const written = [state, cache, join(dir.path, "sessions")].flatMap(modesUnder);
  const files = written.filter((w) => !w.dir).map((w) => w.path);
  for (const name of ["transcript.jsonl", "context.md", "discovery.json"]) {
    assert.ok(files.some((f) => f.endsWith(name)), `${name} was written: ${files.join(", ")}`);
  }
  const loose = written.filter((w) =>
    w.dir ? w.mode !== 0o700 : w.mode !== 0o600 && w.mode !== 0o700
  ).map((w) => `${w.path} ${w.mode.toString(8)}`);
  assert.deepEqual(loose, []);
});
