/**
 * The sandbox's settings (SPEC S8.3): config `sandbox.mode`, `sandbox.network`,
 * `sandbox.deny_read`, `sandbox.unix_sockets` and the CLI flag `--sandbox`, checked into one {@link SandboxSettings}.
 * The old `policy.sandbox` (`true` or `{"network": true}`) still means workspace-write.
 *
 * @module
 */
import { ConfigError } from "../core/errors.ts";

/** How much a sandboxed program may change: nothing, the roots, or (off) no sandbox at all. */
export type SandboxMode = "read-only" | "workspace-write" | "off";

/** Config `sandbox` (+ CLI `--sandbox`): the session's settings. */
export interface SandboxSettings {
  /** Default "workspace-write". */
  mode: SandboxMode;
  /** Default false; a list names the domains allowed (globs like "*.npmjs.org"). */
  network: boolean | string[];
  /** Absolute or "~/" paths hidden in every mode (config `sandbox.deny_read`). */
  denyRead: string[];
  /**
   * Whether sandboxed programs may make unix sockets (config `sandbox.unix_sockets`, default
   * false: `socket(AF_UNIX, …)` fails with EPERM; true: allowed, and every socket outside the
   * call's own covered by a mount). Absent: false.
   */
  unixSockets?: boolean;
}

export const SANDBOX_MODES: readonly SandboxMode[] = ["read-only", "workspace-write", "off"];

/**
 * A domain name, or a glob of its first labels ("*.npmjs.org"), with an optional port
 * ("localhost:8080"; without one, ports 80 and 443).
 */
export const DOMAIN =
  /^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?(:[1-9][0-9]{0,4})?$/i;

/** A `sandbox.deny_read` entry: absolute or under the home folder. */
export const DENY_READ = /^(\/|~\/)/;

/**
 * Reads the sandbox settings from a merged config and the CLI flag, which wins.
 *
 * @param config the merged config values (`Config.values`: dotted `sandbox.mode`,
 *   `sandbox.network`, `sandbox.deny_read`, `policy`), or a plain `{mode, network, deny_read}`
 * @param cliMode the value of `--sandbox`, when given
 * @throws ConfigError with one line naming the key or the flag and what was expected
 */
export function sandboxSettings(config: unknown, cliMode?: string): SandboxSettings {
  const values = (typeof config === "object" && config !== null ? config : {}) as Record<
    string,
    unknown
  >;
  const nested = typeof values.sandbox === "object" && values.sandbox !== null
    ? values.sandbox as Record<string, unknown>
    : values;
  const pick = (key: string) => values[`sandbox.${key}`] ?? nested[key];
  let mode = pick("mode");
  let network = pick("network");
  const denyRead = pick("deny_read") ?? [];
  const unixSockets = pick("unix_sockets") ?? false;
  const legacy = (values.policy as { sandbox?: unknown } | undefined)?.sandbox;
  if (mode === undefined && legacy !== undefined && legacy !== false) {
    mode = "workspace-write";
    if (network === undefined && typeof legacy === "object" && legacy !== null) {
      network = (legacy as { network?: unknown }).network === true;
    }
  }
  if (mode !== undefined && !SANDBOX_MODES.includes(mode as SandboxMode)) {
    throw new ConfigError(
      `config key "sandbox.mode": expected "read-only", "workspace-write" or "off", got ${
        JSON.stringify(mode)
      }`,
    );
  }
  if (cliMode !== undefined) {
    if (!SANDBOX_MODES.includes(cliMode as SandboxMode)) {
      throw new ConfigError(
        `--sandbox: expected read-only, workspace-write or off, got "${cliMode}"`,
      );
    }
    mode = cliMode;
  }
  if (network === undefined) network = false;
  if (typeof network !== "boolean") {
    if (!Array.isArray(network) || network.some((d) => typeof d !== "string" || !DOMAIN.test(d))) {
      throw new ConfigError(
        `config key "sandbox.network": expected true, false or a list of domain names ` +
          `("example.com", "*.npmjs.org", "localhost:8080"), got ${JSON.stringify(network)}`,
      );
    }
  }
  if (
    !Array.isArray(denyRead) || denyRead.some((p) => typeof p !== "string" || !DENY_READ.test(p))
  ) {
    throw new ConfigError(
      `config key "sandbox.deny_read": expected a list of absolute or "~/" paths, got ${
        JSON.stringify(denyRead)
      }`,
    );
  }
  if (typeof unixSockets !== "boolean") {
    throw new ConfigError(
      `config key "sandbox.unix_sockets": expected true or false, got ${
        JSON.stringify(unixSockets)
      }`,
    );
  }
  return {
    mode: (mode as SandboxMode | undefined) ?? "workspace-write",
    network: Array.isArray(network) ? [...network] : network,
    denyRead: [...denyRead],
    ...unixSockets ? { unixSockets } : {},
  };
}

/**
 * The note for an old `"policy": {"sandbox": false}`, which every command reads as no setting
 * at all (the default `workspace-write` for a model's and an MCP client's calls); undefined
 * when the key is not `false` or `sandbox.mode` is set beside it.
 *
 * @param values the merged config values (`policy`, dotted `sandbox.mode`)
 * @param where the file that set `policy` (`Config.origins.policy`)
 */
export function legacySandboxNote(
  values: Record<string, unknown>,
  where: string | undefined,
): string | undefined {
  const legacy = (values.policy as { sandbox?: unknown } | undefined)?.sandbox;
  if (legacy !== false || values["sandbox.mode"] !== undefined) return undefined;
  return `config ${where ?? "policy"}: "policy.sandbox": false does not turn the sandbox off ` +
    `(a model's and an MCP client's commands run sandboxed); "sandbox": {"mode": "off"} does`;
}

const STRENGTH: Record<SandboxMode, number> = { "off": 0, "workspace-write": 1, "read-only": 2 };

/**
 * A project's `sandbox.mode` may only tighten: the stricter of the mode so far and its own.
 *
 * @param before the value from the person's files so far (undefined: the default)
 */
export function tightenMode(before: unknown, project: unknown): unknown {
  const a = (before ?? "workspace-write") as SandboxMode;
  const b = project as SandboxMode;
  return (STRENGTH[b] ?? 0) > (STRENGTH[a] ?? 0) ? b : a;
}

/**
 * A project's `sandbox.network` may only narrow: no network stays none; a list keeps only the
 * domains the person allowed too.
 */
export function tightenNetwork(before: unknown, project: unknown): unknown {
  const a = before ?? false;
  if (a === false || project === false) return false;
  if (project === true) return a;
  const asked = project as string[];
  if (a === true) return asked;
  return asked.filter((d) => (a as string[]).includes(d));
}

/**
 * A project's `policy` (the old `policy.sandbox` inside it) may not give the sandbox the
 * network: `{"network": true}` becomes `true`. The rest of `policy` is tightened where it is read
 * (`policySources`).
 */
export function tightenPolicy(_before: unknown, project: unknown): unknown {
  const p = project as { sandbox?: unknown } | undefined;
  if (typeof p?.sandbox !== "object" || p.sandbox === null) return project;
  if ((p.sandbox as { network?: unknown }).network !== true) return project;
  return { ...p, sandbox: true };
}

/** The settings of the old `policy.sandbox` key (shape: lib/config/shapes.ts). */
export type { SandboxConfig } from "./shapes.ts";
