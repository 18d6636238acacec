/**
 * The sandbox a hook runs in. A hook runs code a model can write — `make -s lint` runs the
 * Makefile a sandboxed `run` may have rewritten, `npm run lint` the package.json, `eslint
 * --fix` its config — so it runs inside the same OS sandbox as a tool call: `workspace-write`
 * (a formatter writes in the roots), capped by the session's mode (`read-only` caps it,
 * `off` runs every hook unsandboxed), honouring `sandbox.network` and hiding the credential
 * stores like every call. A hook entry's `"sandbox": false` runs that hook unsandboxed (one
 * the person trusts with the whole machine: `notify-send` needs the D-Bus socket). Where no
 * sandbox can start, a hook that would be sandboxed is not run: nobody can be asked for a
 * hook, and the model must not gain an unsandboxed run by it.
 *
 * @module
 */
import type { HookSpec } from "../../config/shapes.ts";
import type { Restart } from "../../core/types.ts";
import type { Policy } from "../../policy/decide.ts";
import { launcherFor, sessionSettings } from "../../policy/facts.ts";
import { trackLaunches } from "../../confinement/sandbox.ts";
import type { SandboxMode } from "../../config/sandbox_settings.ts";

/** How one hook starts: the command (bwrap, then `sh -c`), and what to release once it ended. */
export interface HookLaunch {
  program: string;
  args: string[];
  restart?: Restart;
  /** The sandbox's mode, or "off". */
  mode: SandboxMode;
  /** Releases the sandbox's mount points (call once the hook's processes have ended). */
  release(): void;
}

/**
 * The sandbox mode of a hook: "off" for `"sandbox": false` and for a session whose mode is
 * off, "read-only" in a read-only session, else "workspace-write".
 */
export function hookMode(session: SandboxMode, spec: Pick<HookSpec, "sandbox">): SandboxMode {
  if (spec.sandbox === false || session === "off") return "off";
  return session === "read-only" ? "read-only" : "workspace-write";
}

/**
 * The command that runs `sh -c LINE` for a hook, in its sandbox.
 *
 * @returns the launch, or `{refused}`: why it cannot run (no sandbox can start here, or the
 *   sandbox's settings cannot be met), one line without the hook's name
 */
export function hookLaunch(
  policy: Policy,
  spec: Pick<HookSpec, "command" | "sandbox">,
): HookLaunch | { refused: string } {
  const settings = sessionSettings(policy);
  const mode = hookMode(settings.mode, spec);
  const sh = ["-c", spec.command];
  if (mode === "off") return { program: "/bin/sh", args: sh, mode, release: () => {} };
  if (settings.problem) {
    return {
      refused: `was not run: no sandbox can start here (${settings.problem}) and a hook runs ` +
        `sandboxed ("sandbox": false in its entry, or --sandbox off, runs it unsandboxed)`,
    };
  }
  let launches: ReturnType<typeof trackLaunches> | undefined;
  try {
    // A domain list (`sandbox.network`) that cannot be served, too many sockets to cover:
    // the launcher throws, and the hook does not run.
    launches = trackLaunches(launcherFor(policy, mode));
    const command = launches.wrap!("/bin/sh", sh);
    return {
      program: command.program,
      args: command.args,
      restart: command.restart,
      mode,
      release: launches.release,
    };
  } catch (error) {
    launches?.release();
    return { refused: `could not start its sandbox: ${(error as Error).message}` };
  }
}
