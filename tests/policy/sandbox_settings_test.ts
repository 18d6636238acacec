/**
 * The sandbox's settings (config `sandbox.*`, the old `policy.sandbox`, `--sandbox`): one clear
 * line for a bad value; a project's config may only tighten them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../lib/config/load.ts";
import { sandboxSettings } from "../../lib/confinement/sandbox.ts";
import { tightenNetwork } from "../../lib/config/sandbox_settings.ts";
import { hostAllowed } from "../../lib/confinement/sandbox_proxy.ts";
import { tempDir } from "../helpers.ts";

Deno.test("sandbox settings: defaults, dotted and nested config, the CLI flag wins", () => {
  assert.deepEqual(sandboxSettings({}), {
    mode: "workspace-write",
    network: false,
    denyRead: [],
  });
  assert.deepEqual(
    sandboxSettings({ "sandbox.mode": "read-only", "sandbox.deny_read": ["~/x", "/y"] }),
    { mode: "read-only", network: false, denyRead: ["~/x", "/y"] },
  );
  assert.deepEqual(sandboxSettings({ sandbox: { mode: "off", network: true } }, "read-only"), {
    mode: "read-only",
    network: true,
    denyRead: [],
  });
});

Deno.test("sandbox settings: the old policy.sandbox means workspace-write", () => {
  assert.equal(sandboxSettings({ policy: { sandbox: true } }).mode, "workspace-write");
  assert.equal(sandboxSettings({ policy: { sandbox: { network: true } } }).network, true);
  assert.equal(sandboxSettings({ policy: { sandbox: true } }).network, false);
  // The new key wins over the old one.
  assert.equal(
    sandboxSettings({ policy: { sandbox: true }, "sandbox.mode": "read-only" }).mode,
    "read-only",
  );
});

Deno.test("sandbox settings: a bad value is one clear error line", () => {
  const bad: [unknown, string | undefined, RegExp][] = [
    [{}, "none", /^--sandbox: expected read-only, workspace-write or off, got "none"$/],
    [{ "sandbox.mode": "loose" }, undefined, /"sandbox.mode": expected "read-only"/],
    [{ "sandbox.network": "yes" }, undefined, /"sandbox.network": expected true, false/],
    [{ "sandbox.network": ["exa mple.com"] }, undefined, /"sandbox.network": expected true/],
    [{ "sandbox.deny_read": ["relative/x"] }, undefined, /"sandbox.deny_read": expected a list/],
  ];
  for (const [config, cli, message] of bad) {
    assert.throws(() => sandboxSettings(config, cli), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
});

Deno.test("sandbox settings: a project's config may only tighten the mode and the network", async () => {
  await using dir = await tempDir();
  const xdg = join(dir.path, "xdg");
  const project = join(dir.path, "project");
  await Deno.mkdir(join(xdg, "magi"), { recursive: true });
  await Deno.mkdir(join(project, ".magi"), { recursive: true });
  const load = async (user: unknown, proj: unknown) => {
    await Deno.writeTextFile(join(xdg, "magi", "config.jsonc"), JSON.stringify(user));
    await Deno.writeTextFile(join(project, ".magi", "config.jsonc"), JSON.stringify(proj));
    const config = loadConfig({ cwd: project, env: { XDG_CONFIG_HOME: xdg } });
    return { settings: sandboxSettings(config.values), notes: config.notes };
  };
  // Widening is refused, with a note.
  const wide = await load(
    { sandbox: { mode: "workspace-write", deny_read: ["~/a"] } },
    { sandbox: { mode: "off", network: true, deny_read: ["~/b"] } },
  );
  assert.deepEqual(wide.settings, {
    mode: "workspace-write",
    network: false,
    denyRead: ["~/a", "~/b"],
  });
  assert.ok(wide.notes.some((n) => /may only tighten "sandbox.mode"/.test(n)), wide.notes.join());
  assert.ok(wide.notes.some((n) => /may only tighten "sandbox.network"/.test(n)));
  // Tightening is kept.
  const tight = await load(
    { sandbox: { mode: "off", network: true } },
    { sandbox: { mode: "read-only", network: false } },
  );
  assert.deepEqual(tight.settings, { mode: "read-only", network: false, denyRead: [] });
  // Nor through the old key.
  const old = await load({}, { policy: { sandbox: { network: true } } });
  assert.deepEqual(old.settings, { mode: "workspace-write", network: false, denyRead: [] });
  // A bad value names the file and the key.
  await Deno.writeTextFile(
    join(project, ".magi", "config.jsonc"),
    JSON.stringify({ sandbox: { mode: "wide" } }),
  );
  assert.throws(
    () => loadConfig({ cwd: project, env: { XDG_CONFIG_HOME: xdg } }),
    /config .*config\.jsonc: key "sandbox.mode": expected "read-only", "workspace-write"/,
  );
});

Deno.test("sandbox settings: allowed domains — exact names and *.globs; a project narrows them", () => {
  const allowed = sandboxSettings({ sandbox: { network: ["npmjs.org", "*.npmjs.org"] } }).network;
  assert.deepEqual(allowed, ["npmjs.org", "*.npmjs.org"]);
  const list = allowed as string[];
  assert.ok(hostAllowed("registry.npmjs.org", list));
  assert.ok(hostAllowed("NPMJS.ORG.", list));
  assert.ok(!hostAllowed("evilnpmjs.org", list));
  assert.ok(!hostAllowed("npmjs.org.evil.com", list));
  assert.ok(!hostAllowed("127.0.0.1", list));
  assert.deepEqual(tightenNetwork(true, ["a.com"]), ["a.com"]);
  assert.deepEqual(tightenNetwork(["a.com", "b.com"], ["b.com", "c.com"]), ["b.com"]);
  assert.equal(tightenNetwork(false, ["a.com"]), false);
  assert.deepEqual(tightenNetwork(["a.com"], true), ["a.com"]);
});
