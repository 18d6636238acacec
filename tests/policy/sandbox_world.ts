/**
 * Folders for sandbox tests, each chosen explicitly: a temp HOME with fake credential stores,
 * a root, and an "outside" folder that lies under no root and not under the system temp
 * folder (a root, or writable, in older versions) — whatever HOME or the checkout is.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { trackLaunches, type Wrap } from "../../lib/confinement/sandbox.ts";
import { spawnProcess } from "../../lib/exec/spawn.ts";

export const FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- fake-key-for-magi-tests";

/** A world for one test; `dispose` removes every folder it made. */
export interface World extends AsyncDisposable {
  base: string;
  home: string;
  root: string;
  outside: string;
}

/** A folder outside the system temp folder, for what must stay out of reach. */
export async function outsideDir(): Promise<string> {
  const tmp = await Deno.realPath(tmpdir());
  for (const dir of ["/var/tmp", "/dev/shm", Deno.env.get("HOME") ?? "/root", Deno.cwd()]) {
    try {
      const real = await Deno.realPath(dir);
      if (real === tmp || real.startsWith(tmp + "/")) continue;
      const probe = await Deno.makeTempDir({ dir: real, prefix: ".magi-sandbox-outside-" });
      return probe;
    } catch {
      // not usable here
    }
  }
  throw new Error("no writable folder outside the temp folder for the test");
}

/**
 * Makes the folders: `base` under the temp folder holding `home` (with `.ssh/id_ed25519`,
 * `.aws/credentials`, `.netrc`) and `root`; `outside` elsewhere.
 *
 * @param homeInRoot put HOME inside the root instead of beside it
 */
export async function world(opts: { homeInRoot?: boolean } = {}): Promise<World> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "magi-sandbox-" }));
  const root = join(base, "root");
  await Deno.mkdir(root);
  const home = opts.homeInRoot ? join(root, "home") : join(base, "home");
  await Deno.mkdir(join(home, ".ssh"), { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "id_ed25519"), FAKE_KEY + "\n");
  await Deno.mkdir(join(home, ".aws"));
  await Deno.writeTextFile(join(home, ".aws", "credentials"), FAKE_KEY + "\n");
  await Deno.writeTextFile(join(home, ".netrc"), `machine x password ${FAKE_KEY}\n`);
  // Agents' own logins and other tools' keys.
  await Deno.mkdir(join(home, ".claude"));
  await Deno.writeTextFile(join(home, ".claude", ".credentials.json"), `{"t":"${FAKE_KEY}"}`);
  await Deno.writeTextFile(join(home, ".vault-token"), FAKE_KEY);
  await Deno.writeTextFile(join(home, ".pgpass"), `db:5432:*:app:${FAKE_KEY}\n`);
  const outside = await outsideDir();
  return {
    base,
    home,
    root,
    outside,
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
      await Deno.remove(outside, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * What a shell line printed inside a launcher, and its exit status. Started as magi starts a
 * command (`spawnProcess`, with the launcher's restart: a socket that went away while bwrap set
 * the sandbox up makes it try again, as it does for a call).
 */
export async function inside(
  wrap: Wrap,
  line: string,
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; out: string; err: string }> {
  // As the gate does: what bwrap left on the host for this command goes once it has ended.
  const launches = trackLaunches(wrap);
  const { program, args, restart } = launches.wrap!("/bin/sh", ["-c", line]);
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const r = await spawnProcess({
    program,
    args,
    restart,
    cwd: opts.cwd ?? Deno.cwd(),
    env: { ...Deno.env.toObject(), ...opts.env },
    timeoutMs: 60_000,
    onStdout: (c) => void out.push(c.slice()),
    onStderr: (c) => void err.push(c.slice()),
  }).finally(() => launches.release());
  const text = (chunks: Uint8Array[]) => new TextDecoder().decode(concat(chunks));
  return {
    code: r.code ?? (r.signal ? 128 : 1),
    out: text(out),
    err: (r.startError ? r.startError + "\n" : "") + text(err),
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}
