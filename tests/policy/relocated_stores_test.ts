/**
 * Credential stores a tool's own variable moves (finding A13), with real bubblewrap: what
 * `GOOGLE_APPLICATION_CREDENTIALS`, `KUBECONFIG`, `AWS_SHARED_CREDENTIALS_FILE`,
 * `DOCKER_CONFIG`, `GNUPGHOME`, `CARGO_HOME`, `GH_CONFIG_DIR`, `NETRC` … name in the
 * environment magi starts with is hidden from a sandboxed `run` and refused by `read`, as the
 * stores under HOME are; a store that is a root or holds one never hides the root. Every
 * folder (HOME, the root, the keys) is made here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { sandboxProblem } from "../../lib/confinement/sandbox.ts";
import { closeBodyProcesses } from "../../lib/sources/builtins/body_process.ts";
import { relocatedStores } from "../../lib/confinement/relocated_stores.ts";
import { testRuntime } from "../helpers.ts";

const why = await sandboxProblem();
if (why) console.log(`sandbox tests skipped: ${why}`);
const ignore = why !== undefined;

/** HOME, a root and a keys folder beside them, with each store's fake secret. */
async function world() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-relocated-" }));
  const home = join(base, "home");
  const root = join(base, "root");
  const keys = join(base, "keys");
  for (const d of ["docker", "gnupg", "cargo", "gh", "xdg/gcloud"]) {
    await Deno.mkdir(join(keys, d), { recursive: true });
  }
  for (const d of [home, root]) await Deno.mkdir(d, { recursive: true });
  const secrets: Record<string, string> = {
    "sa.json": "sakeyAAA",
    "kube.yaml": "kubetokBBB",
    "kube2.yaml": "kubetokCCC",
    "awscreds": "awssecretDDD",
    "docker/config.json": "dockerauthEEE",
    "gnupg/private.key": "gpgkeyFFF",
    "cargo/credentials.toml": "cargotokGGG",
    "gh/hosts.yml": "ghtokHHH",
    "netrc": "netrcpassIII",
    "xdg/gcloud/credentials.db": "gcloudJJJ",
  };
  for (const [rel, text] of Object.entries(secrets)) {
    await Deno.writeTextFile(join(keys, rel), `${text}\n`);
  }
  // Beside the stores, what stays readable: the rest of DOCKER_CONFIG's and CARGO_HOME's folders.
  await Deno.writeTextFile(join(keys, "docker", "daemon.txt"), "dockerplain\n");
  await Deno.writeTextFile(join(keys, "cargo", "config.toml"), "cargoplain\n");
  const env = {
    HOME: home,
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    GOOGLE_APPLICATION_CREDENTIALS: join(keys, "sa.json"),
    KUBECONFIG: `${join(keys, "kube.yaml")}:${join(keys, "kube2.yaml")}`,
    AWS_SHARED_CREDENTIALS_FILE: join(keys, "awscreds"),
    DOCKER_CONFIG: join(keys, "docker"),
    GNUPGHOME: join(keys, "gnupg"),
    CARGO_HOME: join(keys, "cargo"),
    GH_CONFIG_DIR: join(keys, "gh"),
    NETRC: join(keys, "netrc"),
    XDG_CONFIG_HOME: join(keys, "xdg"),
  };
  return {
    base,
    home,
    root,
    keys,
    secrets,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

function acting(
  w: Awaited<ReturnType<typeof world>>,
  env: Record<string, string>,
  roots = [w.root],
) {
  return testRuntime({
    cwd: w.root,
    env,
    config: {
      shipped_tools: false,
      roots,
      approval: "never",
      sandbox: { mode: "workspace-write" },
    },
  });
}

Deno.test({
  name:
    "sandbox: the stores the environment's variables name are hidden from run and refused by read",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    // The keys in a root too (the temp folder is one by default): `read` reaches them.
    await using t = await acting(w, w.env, [w.root, w.keys]);
    try {
      // A script, as a model would write one: the judge does not see the paths it reads.
      const files = [...Object.keys(w.secrets), "docker/daemon.txt", "cargo/config.toml"];
      const script = files.map((f) => `cat '${join(w.keys, f)}' 2>/dev/null\n`).join("");
      await Deno.writeTextFile(join(w.root, "ev.sh"), script);
      const r = await runTool(t.rt, { name: "run", args: { command: "sh ev.sh" } });
      for (const [rel, text] of Object.entries(w.secrets)) {
        assert.ok(!r.said.includes(text), `${rel} was read: ${r.said}`);
      }
      assert.match(r.said, /dockerplain/);
      assert.match(r.said, /cargoplain/);
      for (const rel of ["awscreds", "kube2.yaml", "gnupg/private.key", "docker/config.json"]) {
        const read = await runTool(t.rt, { name: "read", args: { path: join(w.keys, rel) } });
        assert.equal(read.is_error, true, `${rel}: ${read.said}`);
        assert.match(read.said, /a credential store, hidden from tools/);
      }
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test({
  name:
    "sandbox: a KUBECONFIG in the root is hidden; a GNUPGHOME or CLOUDSDK_CONFIG that is the root or holds it hides nothing",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using w = await world();
    await Deno.writeTextFile(join(w.root, "kube.yaml"), "rootkubeKKK\n");
    await Deno.writeTextFile(join(w.root, "notes.txt"), "rootnotes\n");
    await using t = await acting(w, {
      ...w.env,
      KUBECONFIG: join(w.root, "kube.yaml"),
      GNUPGHOME: w.root,
      CLOUDSDK_CONFIG: w.base,
    });
    try {
      const r = await runTool(t.rt, {
        name: "run",
        args: {
          command: "cat kube.yaml 2>/dev/null; cat notes.txt; echo made > new.txt; cat new.txt",
        },
      });
      assert.ok(!r.said.includes("rootkubeKKK"), r.said);
      assert.match(r.said, /rootnotes\nmade/);
      const read = await runTool(t.rt, { name: "read", args: { path: "kube.yaml" } });
      assert.equal(read.is_error, true, read.said);
      const fine = await runTool(t.rt, { name: "read", args: { path: "notes.txt" } });
      assert.equal(fine.is_error, false, fine.said);
    } finally {
      closeBodyProcesses();
    }
  },
});

Deno.test("relocatedStores: files, folders, files inside folders, lists, never a folder holding a root", () => {
  const got = relocatedStores(
    {
      KUBECONFIG: "/k/a.yaml:relative.yaml::/k/b.yaml",
      GNUPGHOME: "/g",
      CARGO_HOME: "/c",
      GH_CONFIG_DIR: "/r",
      KRB5_KTNAME: "FILE:/etc/krb5.keytab",
      XDG_CONFIG_HOME: "/x",
    },
    ["/r/proj"],
    [".ssh", ".config/gh"],
  );
  assert.deepEqual(got.sort(), [
    "/c/credentials",
    "/c/credentials.toml",
    "/etc/krb5.keytab",
    "/g",
    "/k/a.yaml",
    "/k/b.yaml",
    "/x/gh",
  ]);
});
