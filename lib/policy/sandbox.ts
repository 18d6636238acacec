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
export type Wrap = (
  program: string,
  args: string[],
) => { program: string; args: string[]; env?: Record<string, string> };

/**
 * The session's sandbox mode: `read-only` caps every call at read-only, `workspace-write` lets
 * an approved call write the roots, `off` runs commands unsandboxed (`--sandbox off`).
 */
export type SandboxMode = "read-only" | "workspace-write" | "off";

/** The sandbox's settings (config `sandbox` {mode, network, deny_read}, and `--sandbox`). */
export interface SandboxSettings {
  mode: SandboxMode;
  /** Keep the network: all of it (`true`) or none (`false`; a host list counts as none here). */
  network: boolean | string[];
  /** Further paths the sandboxed command cannot read (`~/` is HOME). */
  denyRead: string[];
  /** Whether `mode` was set (config or flag); unset, a person's own call runs unsandboxed. */
  explicit?: boolean;
}

/** What a sandbox is built around. */
export interface SandboxScope {
  /** Real absolute roots: writable in `workspace-write`. */
  roots: readonly string[];
  home: string;
  /** Paths hidden from the command (credential stores, `deny_read`). */
  hidden: readonly string[];
  visible?: readonly string[];
  /** Unix sockets the command may reach (magi's approvals socket, broker). */
  sockets?: readonly string[];
}

/** Credential stores under HOME a sandboxed command never sees. */
export const HIDDEN_IN_HOME = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".config/gh",
  ".config/gcloud",
  ".npmrc",
  ".pypirc",
];

/**
 * The sandbox settings from the config value `sandbox` (`{mode, network, deny_read}`), the
 * legacy `policy.sandbox` (true or `{network}`) and the `--sandbox MODE` flag, which wins.
 *
 * @throws Error naming a flag value that is no mode
 */
export function sandboxSettings(config: unknown, cliMode?: string): SandboxSettings {
  const c = (typeof config === "object" && config !== null ? config : {}) as {
    mode?: unknown;
    network?: unknown;
    deny_read?: unknown;
  };
  const modes = ["read-only", "workspace-write", "off"];
  let mode: SandboxMode = "workspace-write";
  let explicit = false;
  if (typeof c.mode === "string" && modes.includes(c.mode)) {
    mode = c.mode as SandboxMode;
    explicit = true;
  } else if (config === true) explicit = true;
  if (cliMode !== undefined) {
    if (!modes.includes(cliMode)) {
      throw new Error(`--sandbox: expected read-only, workspace-write or off, got "${cliMode}"`);
    }
    mode = cliMode as SandboxMode;
    explicit = true;
  }
  const network = c.network === true ||
    (Array.isArray(c.network) ? c.network.filter((h) => typeof h === "string") : false);
  const denyRead = Array.isArray(c.deny_read)
    ? c.deny_read.filter((p): p is string => typeof p === "string")
    : [];
  return { mode, network, denyRead, explicit };
}

/**
 * The launcher of one call's sandbox: bwrap with the filesystem read-only, the roots and the
 * temp folder writable in `workspace-write`, the hidden paths covered, no network unless the
 * settings keep it, the sockets reachable.
 */
export function sandboxLauncher(
  settings: SandboxSettings,
  scope: SandboxScope,
  mode: "read-only" | "workspace-write",
): Wrap {
  const bwrap = findBwrap(Deno.env.get("PATH") ?? "") ?? "bwrap";
  const writable = mode === "workspace-write" ? [...scope.roots, realTemp()] : [];
  const args = bwrapArgs(writable, settings.network === true);
  args.pop(); // --die-with-parent goes last
  const home = scope.home.replace(/\/+$/, "");
  const hidden = [...scope.hidden, ...settings.denyRead].map((p) =>
    p === "~" ? home : p.startsWith("~/") ? home + p.slice(1) : p
  );
  for (const path of new Set(hidden)) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      continue;
    }
    if (info.isDirectory) args.push("--tmpfs", path, "--remount-ro", path);
    else args.push("--ro-bind", "/dev/null", path);
  }
  // magi's own scratch folder (where `run` notes the line's last folder) stays writable.
  if (mode === "read-only") args.push("--bind", scratchDir(), scratchDir());
  for (const socket of scope.sockets ?? []) {
    if (mode === "read-only") args.push("--bind-try", socket, socket);
  }
  args.push("--die-with-parent");
  return (program, rest) => ({ program: bwrap, args: [...args, "--", program, ...rest] });
}

let scratch: string | undefined;

/**
 * magi's own scratch folder (private, made once per process, removed at exit): files magi
 * reads back from a sandboxed command, such as `run`'s last working folder. It stays writable
 * in the read-only sandbox.
 */
export function scratchDir(): string {
  if (scratch) return scratch;
  const dir = Deno.makeTempDirSync({ prefix: "magi-scratch-" });
  const real = Deno.realPathSync(dir);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(real, { recursive: true });
    } catch {
      // gone already
    }
  });
  return scratch = real;
}

const defaultProbes = new Map<string, Promise<string | undefined>>();

/**
 * Whether a sandbox can start here (bwrap on `path`, user namespaces), probed once per PATH.
 *
 * @returns undefined when it can, or why not
 */
export function sandboxProblem(path?: string): Promise<string | undefined> {
  const p = path ?? Deno.env.get("PATH") ?? "";
  let probe = defaultProbes.get(p);
  if (!probe) {
    probe = Deno.build.os !== "linux"
      ? Promise.resolve(`no sandbox on ${Deno.build.os} (bwrap is Linux only)`)
      : bwrapProblem(findBwrap(p), ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    defaultProbes.set(p, probe);
  }
  return probe;
}

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
export function bwrapProblem(
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
    problem: () => bwrapProblem(bwrap, args),
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
