/**
 * The credential stores are hidden under the passwd home of magi's uid as under HOME (issue
 * #13, A12): with HOME elsewhere (`sudo -E`, a container's HOME=/work) and the passwd home in
 * sight (a folder a call needs lies in it), and with HOME unset (cron, `env -i`). A real home
 * cannot be made in a test: a temp folder stands for the passwd home, given as the parameter
 * production reads from /etc/passwd. Real bubblewrap, real processes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { passwdHome } from "../../lib/confinement/sandbox_paths.ts";
import { sandboxLauncher, sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { createRuntime } from "../../lib/runtime/runtime.ts";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sessionSettings } from "../../lib/policy/facts.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { FAKE_KEY, inside, world } from "./sandbox_world.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

Deno.test("passwdHome: the sixth field of the uid's line; '' when none or not absolute", () => {
  const passwd = "root:x:0:0:root:/root:/bin/bash\n" +
    "bad:x:7\n" +
    "ann:x:1000:1000:Ann,,,:/home/ann:/bin/zsh\n" +
    "rel:x:1001:1001::home/rel:/bin/sh\n";
  assert.equal(passwdHome(0, passwd), "/root");
  assert.equal(passwdHome(1000, passwd), "/home/ann");
  assert.equal(passwdHome(1001, passwd), "");
  assert.equal(passwdHome(7, passwd), "");
});

/** A folder standing for the passwd home: stores with fake keys, a cache a call needs. */
async function passwdHomeIn(base: string): Promise<string> {
  const home = join(base, "passwd-home");
  await Deno.mkdir(join(home, ".aws"), { recursive: true });
  await Deno.writeTextFile(join(home, ".aws", "credentials"), FAKE_KEY + "\n");
  await Deno.mkdir(join(home, ".ssh"));
  await Deno.writeTextFile(join(home, ".ssh", "id_ed25519"), FAKE_KEY + "\n");
  await Deno.writeTextFile(join(home, ".git-credentials"), `https://u:${FAKE_KEY}@x\n`);
  await Deno.mkdir(join(home, ".cache", "deno"), { recursive: true });
  await Deno.writeTextFile(join(home, ".cache", "deno", "dep.txt"), "needed-dep\n");
  return home;
}

Deno.test({
  name: "sandbox: the passwd home's stores are hidden though HOME is elsewhere and it is needed",
  ignore,
  fn: async () => {
    await using w = await world();
    const userHome = await passwdHomeIn(w.base);
    for (const mode of ["read-only", "workspace-write"] as const) {
      const wrap = sandboxLauncher(
        { mode, network: false, denyRead: [] },
        {
          roots: [w.root],
          home: w.home,
          userHome,
          hidden: [],
          needed: [join(userHome, ".cache", "deno")],
        },
        mode,
      );
      const r = await inside(
        wrap,
        `cd "$U"; cat .aws/credentials .ssh/id_ed25519 .git-credentials .cache/deno/dep.txt; true`,
        { env: { U: userHome } },
      );
      assert.ok(!r.out.includes("fake-key"), `${mode}: ${r.out}`);
      assert.match(r.out, /needed-dep/, `${mode}: ${r.out}${r.err}`);
    }
  },
});

Deno.test({
  name: "sandbox: with HOME unset the passwd home stands for it (run, read)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    const userHome = await passwdHomeIn(w.base);
    // No HOME: magi's folders named by the XDG variables, inside the base.
    const env = {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      XDG_CONFIG_HOME: join(w.base, "xdg", "config"),
      XDG_STATE_HOME: join(w.base, "xdg", "state"),
      XDG_CACHE_HOME: join(w.base, "xdg", "cache"),
    };
    const config = join(w.base, "cfg.jsonc");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        shipped_tools: false,
        roots: [w.root, userHome],
        approval: "never",
        sandbox: { mode: "workspace-write" },
      }),
    );
    const rt = await createRuntime({ cwd: w.root, env, configFlag: config, warn: () => {} });
    sessionSettings(rt.policy).userHome = userHome;
    try {
      const r = await runTool(rt, {
        name: "run",
        args: { command: `cd ${userHome}; cat .aws/credentials .ssh/id_ed25519; echo end` },
      });
      assert.match(r.said, /end/, r.said);
      assert.ok(!r.said.includes("fake-key"), r.said);
      const read = await runTool(rt, {
        name: "read",
        args: { path: join(userHome, ".aws", "credentials") },
      });
      assert.equal(read.is_error, true, read.said);
      assert.match(read.said, /a credential store/);
    } finally {
      closeBodyProcesses();
    }
  },
});
