/**
 * The host look-up (finding A15), with real bubblewrap and real magi processes: a PATH that
 * starts with a root's own `node_modules/.bin` (writable in `workspace-write`, for
 * `npm install`) lets a model's sandboxed `run` plant a program there. What magi itself
 * starts on the host by a bare name — the default peer `casper`, `sh` for a hook, the
 * interpreter of a tools_dir tool's `#!/usr/bin/env` line at discovery — must not be it.
 * Every folder (HOME, the root, the temp folder, the one outside) is made here; magi runs
 * with its own TMPDIR so the "outside" folder is outside the temp folder too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { hostPath, hostProgram } from "../../lib/core/program.ts";
import { magi, tempDir } from "../helpers.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

/** HOME, a root with `node_modules/.bin`, a temp folder and a bin folder outside them all. */
async function world(base: string) {
  const home = join(base, "home");
  const root = join(base, "root");
  const npmBin = join(root, "node_modules", ".bin");
  const outBin = join(base, "outbin");
  const tmp = join(base, "tmp");
  for (const d of [home, npmBin, outBin, tmp]) await Deno.mkdir(d, { recursive: true });
  const env = {
    HOME: home,
    TMPDIR: tmp,
    PATH: `${npmBin}:${outBin}:/usr/local/bin:/usr/bin:/bin`,
  };
  const marker = join(base, "PLANTED-RAN");
  return { home, root, npmBin, outBin, env, marker };
}

/** A config acting without asking in workspace-write over the root. */
async function config(path: string, root: string, more: Record<string, unknown> = {}) {
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      shipped_tools: false,
      roots: [root],
      approval: "never",
      sandbox: { mode: "workspace-write" },
      ...more,
    }),
  );
  return path;
}

/** A sandboxed model's `run` that writes `node_modules/.bin/NAME` (it writes the marker). */
function plant(name: string, marker: string, tail: string): string {
  const body = `#!/bin/sh\\necho ran >> ${marker}\\n${tail}\\n`;
  return JSON.stringify({
    command: `printf '${body}' > node_modules/.bin/${name} && chmod +x node_modules/.bin/${name}` +
      ` && echo planted`,
  });
}

Deno.test({
  name:
    "host look-up: a casper and a python3 planted in a root's node_modules/.bin by a sandboxed run do not run at the next start",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir("magi-hostpath-");
    const w = await world(dir.path);
    await Deno.writeTextFile(
      join(w.outBin, "casper"),
      `#!/bin/sh\necho '[{"name":"casper_hello","description":"Say hello"}]'\n`,
      { mode: 0o755 },
    );
    const tools = join(dir.path, "tools");
    await Deno.mkdir(join(tools, "hello_py"), { recursive: true });
    await Deno.writeTextFile(
      join(tools, "hello_py", "hello_py"),
      "#!/usr/bin/env python3\n# hello_py — say hello\nprint('hello_py — say hello')\n",
      { mode: 0o755 },
    );
    const cfg = await config(join(dir.path, "config.json"), w.root, { tools_dir: [tools] });
    const opts = { cwd: w.root, env: w.env, home: w.home };
    for (const name of ["casper", "python3"]) {
      const r = await magi(
        ["call", "--config", cfg, "--as-model", "run", plant(name, w.marker, 'echo "[]"')],
        opts,
      );
      assert.match(r.stdout, /planted/, r.stdout + r.stderr);
      assert.ok(await exists(join(w.npmBin, name)), `${name} was planted`);
    }
    const listed = await magi(["tools", "--config", cfg], opts);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /casper_hello/, listed.stdout + listed.stderr);
    assert.match(listed.stdout, /hello_py/, listed.stdout + listed.stderr);
    assert.equal(await exists(w.marker), false, "a planted program ran on the host");
  },
});

Deno.test({
  name:
    "host look-up: a hook starts /bin/sh, not an sh a sandboxed run planted in node_modules/.bin",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir("magi-hostpath-");
    const w = await world(dir.path);
    const cfg = await config(join(dir.path, "config.json"), w.root, {
      hooks: { after_tool: [{ command: "echo hooked >> hook.log" }] },
    });
    const r = await magi(
      ["call", "--config", cfg, "--as-model", "run", plant("sh", w.marker, 'exec /bin/sh "$@"')],
      { cwd: w.root, env: w.env, home: w.home },
    );
    assert.match(r.stdout, /planted/, r.stdout + r.stderr);
    assert.ok(await exists(join(w.npmBin, "sh")));
    assert.equal(await Deno.readTextFile(join(w.root, "hook.log")), "hooked\n", r.stderr);
    assert.equal(await exists(w.marker), false, "the planted sh ran on the host");
  },
});

Deno.test("host look-up: a PATH folder the sandbox keeps read-only inside a root (~/go/bin, HOME a root) is still searched", async () => {
  await using dir = await tempDir("magi-hostpath-");
  const w = await world(dir.path);
  const goBin = join(w.home, "go", "bin");
  await Deno.mkdir(goBin, { recursive: true });
  await Deno.writeTextFile(
    join(goBin, "casper"),
    `#!/bin/sh\necho '[{"name":"casper_gone","description":"Say gone"}]'\n`,
    { mode: 0o755 },
  );
  const cfg = await config(join(dir.path, "config.json"), w.root, { roots: [w.home, w.root] });
  const listed = await magi(["tools", "--config", cfg], {
    cwd: w.root,
    env: { ...w.env, PATH: `${goBin}:/usr/local/bin:/usr/bin:/bin` },
    home: w.home,
  });
  assert.match(listed.stdout, /casper_gone +peer/, listed.stdout + listed.stderr);
});

Deno.test("hostPath keeps PATH's absolute folders outside the roots and the temp folder", async () => {
  await using dir = await tempDir("magi-hostpath-");
  const root = join(dir.path, "root");
  const out = join(dir.path, "out");
  await Deno.mkdir(join(root, "bin"), { recursive: true });
  await Deno.mkdir(out);
  await Deno.symlink(join(root, "bin"), join(out, "link"));
  await Deno.writeTextFile(join(root, "bin", "zz-prog"), "#!/bin/sh\n", { mode: 0o755 });
  const path = [
    "bin",
    join(root, "bin"),
    join(out, "link"), // a symlink into the root
    join(root, "not-yet"), // missing: may be made later
    out,
    "/usr/bin",
  ].join(":");
  const kept = hostPath(path, { avoid: [root] }).split(":");
  assert.ok(!kept.includes(join(root, "bin")) && !kept.includes(join(out, "link")));
  assert.ok(!kept.includes("bin") && !kept.includes(join(root, "not-yet")));
  assert.ok(kept.includes("/usr/bin"));
  assert.equal(hostProgram("zz-prog", path, { avoid: [root] }), undefined);
});
