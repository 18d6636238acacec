/**
 * A sandbox for commands (SPEC S8, `policy.sandbox`): Deno's permissions stop at a child
 * process, so when the sandbox is on, `run` and tools from a tools folder start inside
 * bubblewrap (`bwrap`): the whole filesystem read-only except the roots and the temp folder,
 * `/dev` and `/proc` fresh, no network unless `{"network": true}`, the environment (tool links
 * on PATH, the MAGI_* context, magi's sockets) and the working folder as they were.
 *
 * When the sandbox is on but `bwrap` cannot start, commands are refused — never run
 * unsandboxed.
 *
 * @module
 */
import { delimiter, isAbsolute, join } from "node:path";
import type { Policy } from "./decide.ts";
import { systemTempDir } from "./roots.ts";

/** The sandbox's settings (config `policy.sandbox`). */
export interface SandboxConfig {
  /** Keep the network (default: none). */
  network?: boolean;
}

/** Turns a program and its arguments into the command that runs them inside the sandbox. */
export type Wrap = (program: string, args: string[]) => { program: string; args: string[] };

/** Finds `bwrap` on a PATH; undefined when it is not there. */
export function findBwrap(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    try {
      const candidate = join(dir, "bwrap");
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * bwrap's arguments, before `--` and the command.
 *
 * @param writable real absolute folders that stay writable (the roots, the temp folder)
 */
export function bwrapArgs(writable: readonly string[], network: boolean): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const dir of new Set(writable)) {
    try {
      if (!Deno.statSync(dir).isDirectory) continue;
    } catch {
      continue;
    }
    args.push("--bind", dir, dir);
  }
  if (!network) args.push("--unshare-net");
  args.push("--die-with-parent");
  return args;
}

const probes = new Map<string, Promise<string | undefined>>();

/**
 * Whether bwrap starts here (checked once per bwrap path and argument list).
 *
 * @returns undefined when it does, or why not
 */
export function sandboxProblem(
  bwrap: string | undefined,
  args: string[],
): Promise<string | undefined> {
  if (!bwrap) return Promise.resolve('bwrap is not on PATH (Debian package "bubblewrap")');
  const key = [bwrap, ...args].join("\0");
  let probe = probes.get(key);
  if (!probe) {
    probe = (async () => {
      try {
        const out = await new Deno.Command(bwrap, {
          args: [...args, "--", "true"],
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).output();
        if (out.success) return undefined;
        const why = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1);
        return `bwrap cannot start (exit status ${out.code}${why ? `: ${why}` : ""})`;
      } catch (error) {
        return `bwrap cannot start: ${(error as Error).message}`;
      }
    })();
    probes.set(key, probe);
  }
  return probe;
}

/** The sandbox of a policy, or undefined when it is off. */
export interface Sandbox {
  wrap: Wrap;
  /** Why bwrap cannot start here, or undefined when it can. */
  problem(): Promise<string | undefined>;
}

/**
 * The sandbox for a policy with `sandbox` on.
 *
 * @param path the PATH to find bwrap on (magi's own)
 */
export function sandboxFor(policy: Policy, path: string): Sandbox | undefined {
  if (!policy.sandbox) return undefined;
  const config: SandboxConfig = typeof policy.sandbox === "object" ? policy.sandbox : {};
  const bwrap = findBwrap(path);
  const args = bwrapArgs([...policy.roots, realTemp()], config.network === true);
  return {
    wrap: (program, rest) => ({
      program: bwrap ?? "bwrap",
      args: [...args, "--", program, ...rest],
    }),
    problem: () => sandboxProblem(bwrap, args),
  };
}

function realTemp(): string {
  const tmp = systemTempDir();
  try {
    return Deno.realPathSync(tmp);
  } catch {
    return tmp;
  }
}
