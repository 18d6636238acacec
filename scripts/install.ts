/**
 * `deno task install`: builds magi's bundle (scripts/bundle.ts, `dist/bundle/`) and installs a
 * `magi` command for it with `deno install -g`, run with magi's permission set
 * (scripts/permissions.ts) and this checkout's deno.json. The command runs this checkout's
 * code with Deno, so it works offline once `deno install` has filled `node_modules`; move or
 * delete the checkout and the command breaks (build a binary with `deno task compile` for
 * that). A change to the checkout's code reaches the command when it is installed again.
 *
 * Usage: `deno task install [--root DIR]` (default root: Deno's, `~/.deno`; the command is
 * `<root>/bin/magi`). Replaces an earlier install. Exits with `deno install`'s status.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { RUN_FLAGS } from "./permissions.ts";
import { buildBundle, BUNDLE_DIR, BUNDLE_ENTRY } from "./bundle.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The `deno install` arguments for a `magi` command under `root` (Deno's default if unset). */
export function installArgs(root?: string): string[] {
  return [
    "install",
    "--global",
    "--force",
    "--quiet",
    "--name",
    "magi",
    ...(root ? ["--root", root] : []),
    "--config",
    join(REPO, "deno.json"),
    ...RUN_FLAGS,
    join(BUNDLE_DIR, BUNDLE_ENTRY),
  ];
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { root: { type: "string" } } });
  try {
    await buildBundle();
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(1);
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: installArgs(values.root),
    cwd: REPO,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (out.success) console.log(installedMessage(values.root, Deno.env.toObject()));
  Deno.exit(out.code);
}

/**
 * Where the command went and whether its folder is on PATH: `deno install` puts it in
 * `ROOT/bin`, ROOT being `--root`, else `$DENO_INSTALL_ROOT`, else `~/.deno`.
 */
export function installedMessage(root: string | undefined, env: Record<string, string>): string {
  const base = root ?? env.DENO_INSTALL_ROOT ?? join(env.HOME ?? "~", ".deno");
  const bin = join(resolve(base), "bin");
  const onPath = (env.PATH ?? "").split(":").some((p) => p !== "" && resolve(p) === bin);
  return `installed ${join(bin, "magi")}
` + (onPath
    ? `${bin} is on PATH: run magi --help`
    : `${bin} is not on PATH: add it (export PATH="${bin}:$PATH") or run ${join(bin, "magi")}`);
}
