/**
 * The runtime: config, the masker, the registry built from every source, the tool-links
 * folder and the session's working directory — everything a call needs, built once.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILTINS } from "../sources/builtins/mod.ts";
import { apiKeyEnvNames } from "../config/providers.ts";
import {
  type Config,
  ConfigError,
  loadConfig,
  readConfigFile,
  stringList,
} from "../config/load.ts";
import { collectSecrets, Masker, type Secret } from "../pipeline/mask.ts";
import { ruleSetCredentials } from "../pipeline/rule_set.ts";
import { useMasker } from "../pipeline/out.ts";
import { type CallContext, childEnv } from "../exec/env.ts";
import { type LinkEntry, prepareLinks } from "../exec/links.ts";
import { builtinTool } from "../sources/builtins/builtin.ts";
import { effectiveRoots, isInside } from "../policy/roots.ts";
import { hostPath, type HostScope } from "../core/program.ts";
import { loadPolicy, type Policy, policySources, userConfigFile } from "../policy/decide.ts";
import { newApprovalKey, serveApprovals, TOKEN_VARIABLE } from "../policy/approvals.ts";
import { confinedBody } from "../sources/builtins/body_worker.ts";
import { gatedInner } from "../policy/gate.ts";
import { type SessionSettings, setSessionSettings } from "../policy/facts.ts";
import { filterDir, sandboxProblem, sandboxSettings, scratchDir } from "../confinement/sandbox.ts";
import { luaConfinement } from "../policy/lua_exec.ts";
import {
  linkTargets,
  pathFolders,
  relocatedStartup,
  runsLater,
  trustedProjectFiles,
  xdgStartup,
  xdgStartupMissing,
} from "../policy/runs_later.ts";
import { builtinShim, selfCommand } from "../exec/self_command.ts";
import { shellWord } from "../core/quote.ts";
import { defaultCachePath, DiscoveryCache } from "../sources/discovery_cache.ts";
import {
  type McpServerSpec,
  mcpTools,
  specSecrets,
  withServerTools,
} from "../sources/mcp/client.ts";
import { declaredTools, luaDirs } from "../sources/lua/sources.ts";
import { configuredPeers } from "../sources/peers.ts";
import { Registry } from "../registry/registry.ts";
import { discover, type FoundTool, toolsDirTool } from "../sources/tools_dir.ts";
import type { Tool, Warn } from "../core/types.ts";
import { shippedToolsDir } from "../exec/shipped.ts";
import { discoverSkills, type Skill } from "../sources/skills/discover.ts";
import { skillTool } from "../sources/skills/tool.ts";
import { Hooks } from "./hooks/hooks.ts";
import { hookMode } from "./hooks/hook_sandbox.ts";
import { magiDir } from "../core/xdg.ts";

/** The session a call belongs to. `cwd` changes when `run` does `cd`. */
export interface Session {
  cwd: string;
}

/** Everything a call needs. */
export interface Runtime {
  /** Built once when the runtime is made, and frozen: a new config is a new runtime. */
  readonly config: Config;
  registry: Registry;
  masker: Masker;
  session: Session;
  /** magi's own environment (the base of every child's). */
  env: Record<string, string>;
  /**
   * The base of a tool call's environment: `env` without the providers' API-key variables
   * (config `secrets.pass_env` names those a tool may still see). A model's tool has no use
   * for the key magi talks to the model with, and a networked one could send it away.
   */
  toolEnv: Record<string, string>;
  /** Context variables for children, besides MAGI_CWD (set per call). */
  context: Omit<CallContext, "MAGI_CWD">;
  linksDir: string | undefined;
  spillDir: string;
  timeoutSeconds: number;
  limits: { saidBytes: number; shownBytes: number; spillBytes: number };
  /** The discovered tools_dir tools (for `magi check`). */
  found: FoundTool[];
  /** The allowed roots of the file builtins (real absolute paths; config `roots`). */
  roots: string[];
  /** What may run (config `policy`; SPEC S8). */
  policy: Policy;
  /**
   * The session's door settings: the sandbox mode and settings (config `sandbox`,
   * `--sandbox`), whether a sandbox can start here, and `approval` (config, `--auto`).
   */
  door: SessionSettings;
  /** The skills found for the working folder (`lib/sources/skills/discover.ts`), sorted by name. */
  skills: Skill[];
  /**
   * Takes the mail left for the agent's session (`lib/agent/subagents/mailbox.ts`), as texts the model
   * reads, each with its sender; set by `startAgent` and for each sub-agent.
   */
  inbox?: () => { from: string; text: string }[];
  /** The person's hooks (config `hooks`; a project's only when trusted). */
  hooks?: Hooks;
  warn: Warn;
}

/** How to build a runtime. */
export interface RuntimeOptions {
  cwd: string;
  env: Record<string, string>;
  /** `--config FILE`. */
  configFlag?: string;
  /** `--tools-dir DIR`, in order, before the config's folders. */
  toolsDirs?: string[];
  /** One line per problem with a tool, a file or a secret. */
  warn: Warn;
  /** Secrets of magi's own to mask besides the configured ones (the MCP bearer token). */
  secrets?: readonly Secret[];
  /** `--sandbox MODE`: read-only, workspace-write or off. */
  sandboxFlag?: string;
  /**
   * Whether to find out if a sandbox can start here (default true). False for commands that
   * make no calls; a call made anyway runs sandboxed, and fails if bwrap cannot start.
   */
  probeSandbox?: boolean;
  /** `--auto`: approval "never". */
  auto?: boolean;
}

/** magi's state folder: `$XDG_STATE_HOME/magi` (or `~/.local/state/magi`). */
export function stateDir(env: Record<string, string>): string {
  return magiDir(env, "state", env.HOME ?? Deno.cwd());
}

function cacheDir(env: Record<string, string>): string {
  return magiDir(env, "cache", env.HOME ?? Deno.cwd());
}

/**
 * The masker for a config and an environment (SPEC S2.3): credential variables, config
 * `secrets.env` and `secrets.values`, each provider's API-key variable, the values of MCP
 * servers' `env` and `headers` entries (`specSecrets`: after `${NAME}` expansion, plain values
 * left out), and `extra` (magi's own, such as the MCP bearer token). Names a
 * too-short value once through `warn`.
 */
export function maskerFor(
  config: Config,
  env: Record<string, string>,
  warn: Warn,
  extra: readonly Secret[] = [],
  flagged: readonly string[] = [],
): Masker {
  const v = config.values;
  // Every value of an MCP server's `env` and `headers` (tokens, "Authorization: Bearer …").
  const serverSecrets = Object.values(v.mcp_servers).flatMap((s) => specSecrets(strings(s), env));
  const collected = collectSecrets(
    env,
    [...v["secrets.env"], ...apiKeyEnvNames(v.providers), ...flagged],
    v["secrets.values"],
    v["secrets.ignore"],
  );
  for (const name of new Set(collected.tooShort)) {
    warn(`secret $${name} is shorter than 6 bytes and is not masked`);
  }
  return new Masker([...collected.secrets, ...serverSecrets, ...extra]);
}

/**
 * The variables secretlint's rule set flags (`pipeline/rule_set.ts`) among those neither a
 * name marker, `token_formats.json` nor `secrets.ignore` settles.
 */
async function ruleSetFlagged(config: Config, env: Record<string, string>): Promise<string[]> {
  const v = config.values;
  const ignored = new Set(v["secrets.ignore"]);
  const named = new Set(collectSecrets(env, v["secrets.env"]).secrets.map((s) => s.name));
  const open = Object.fromEntries(
    Object.entries(env).filter(([name]) => !ignored.has(name) && !named.has(name)),
  );
  return await ruleSetCredentials(open, join(cacheDir(env), "secret-rules.json"));
}

/** An MCP server entry with only its string-valued `env` and `headers` entries kept. */
function strings(spec: Pick<McpServerSpec, "env" | "headers">): McpServerSpec {
  const only = (record: unknown) =>
    typeof record === "object" && record !== null
      ? Object.fromEntries(
        Object.entries(record).filter((e): e is [string, string] => typeof e[1] === "string"),
      )
      : undefined;
  return { env: only(spec.env), headers: only(spec.headers) };
}

/**
 * Loads the config, discovers every source's tools and builds the registry.
 *
 * @throws ConfigError when the config cannot be used
 */
export async function createRuntime(opts: RuntimeOptions): Promise<Runtime> {
  // `--tools-dir` goes in when the config is built (before the config's folders), never after.
  const config = loadConfig({
    cwd: opts.cwd,
    env: opts.env,
    configFlag: opts.configFlag,
    toolsDirs: opts.toolsDirs,
  });
  const v = config.values;
  // The approvals socket's key begins every call's MAGI_APPROVAL_TOKEN: masked like a secret.
  const approvalKey = newApprovalKey();
  const masker = maskerFor(
    config,
    opts.env,
    opts.warn,
    [...(opts.secrets ?? []), { name: TOKEN_VARIABLE, value: approvalKey }],
    await ruleSetFlagged(config, opts.env),
  );
  // Every later write to stdout and stderr — Lua `print` while declarations load included —
  // is masked with this runtime's secrets (lib/pipeline/out.ts).
  useMasker(masker);
  const context = { MAGI_CONFIG: config.explicit };
  const roots = effectiveRoots(v.roots && [...v.roots], opts.cwd);
  // What magi starts at start-up on the host (`--help` discovery, peers' `tools --json`, MCP
  // servers) gets PATH's folders outside the roots and the temp folder, but for those the
  // sandbox keeps read-only: an MCP command or a `#!/usr/bin/env python3` line cannot pick a
  // program a sandboxed call planted (`./node_modules/.bin` of a root stays writable).
  const home = opts.env.HOME ? realPath(opts.env.HOME) : "";
  const host: HostScope = {
    avoid: roots,
    kept: pathFolders(opts.env, roots, home).filter((p) => !roots.some((r) => isInside(r, p))),
  };
  const helpEnv = childEnv({ ...opts.env, PATH: hostPath(opts.env.PATH, host) }, undefined, {
    ...context,
    MAGI_CWD: opts.cwd,
  });

  const seen = new Set<string>();
  const configured = stringList(v.tools_dir).filter((dir) => {
    const real = realPath(dir);
    return seen.has(real) ? false : (seen.add(real), true);
  });
  const shipped = v.shipped_tools ? [shippedToolsDir()] : [];
  const realConfigured = new Set(configured.map(realPath));
  const shippedDirs = shipped.filter((d) => !realConfigured.has(realPath(d)));

  const spillDir = v.spill_dir ?? join(stateDir(opts.env), "spill");
  /** The runtime once built (a late server's tools are swapped into its registry). */
  const built: { runtime?: Runtime } = {};
  /** Servers whose tools changed before the runtime was built. */
  const early = new Map<string, Tool[]>();
  const mcpLoading = mcpTools({
    servers: v.mcp_servers,
    configFile: config.origins.mcp_servers === "default" ? undefined : config.origins.mcp_servers,
    cwd: opts.cwd,
    env: helpEnv,
    spillDir,
    masker,
    cachePath: join(cacheDir(opts.env), "mcp-tools.json"),
    authDir: join(stateDir(opts.env), "mcp-oauth"),
    maxMessageBytes: v["limits.mcp_message_bytes"],
    warn: opts.warn,
    // A server ready late, or whose tools changed: its tools are swapped in the registry.
    onServerTools: (server, tools) => {
      const runtime = built.runtime;
      if (!runtime) return void early.set(server, tools);
      runtime.registry = withServerTools(runtime.registry, server, tools, opts.warn, mask);
    },
  });
  // The file builtins' bodies run in Workers with Deno permissions from the policy (below).
  const builtinTools = BUILTINS.map((b) =>
    builtinTool(b, {
      roots,
      body: (b) => confinedBody(() => policy, b, { writeBytes: v["limits.write_bytes"] }),
    })
  );
  const innerOf = new Map(builtinTools.map((t) => [t, gatedInner(() => policy, t)]));
  const declaredLoading = declaredTools({
    config,
    cwd: opts.cwd,
    env: opts.env,
    childEnv: helpEnv,
    // A Lua declaration re-describing a builtin reaches it through the policy again.
    builtins: builtinTools.map((t) => innerOf.get(t)!),
    host,
    // Lua bodies run in Workers with Deno permissions from the policy; `magi.exec` is judged.
    confine: luaConfinement(() => policy),
    warn: opts.warn,
  });
  const cache = new DiscoveryCache(defaultCachePath(opts.env));
  const mask = (text: string) => masker.maskText(text);
  const [fromDirs, fromShipped] = await Promise.all([
    discover({ dirs: configured, env: helpEnv, cache, warn: opts.warn, mask }),
    discover({ dirs: shippedDirs, env: helpEnv, cache, warn: opts.warn, mask, quietHeaders: true }),
  ]);
  cache.save();
  const fromMcp = await mcpLoading;
  const declared = await declaredLoading;

  const skills = discoverSkills(opts.cwd, opts.env, opts.warn);
  const tools: Tool[] = [
    ...builtinTools,
    // `skill` only when there are skills to load; its scripts pass the door one by one.
    ...(skills.length > 0 ? [skillTool(skills, () => policy)] : []),
    ...fromDirs.map((f) => toolsDirTool(f, "tools_dir")),
    ...fromShipped.map((f) => toolsDirTool(f, "shipped")),
    ...fromMcp,
    ...declared.tools,
  ].filter((t) => !declared.replaced.has(innerOf.get(t) ?? t));
  const registry = new Registry(tools, opts.warn, mask);
  // The person's own config files set the policy; a project's may only tighten it.
  const own = (file: string) => file === config.explicit || file === userConfigFile(opts.env);
  const policy = loadPolicy(
    policySources(config.files, own, readConfigFile, opts.warn),
    "default",
    roots,
    opts.env,
    (name) => (built.runtime?.registry ?? registry).get(name)?.origin.source,
  );

  const socket = approvalSocket(policy, approvalKey, opts.warn);
  const door = await doorSettings(config, policy, opts, socket);
  // The person's own config files (the user's, `--config`, MAGI_CONFIG) are magi's own files:
  // hidden from sandboxed programs and the file builtins wherever they lie, a root included
  // (they hold tokens and `secrets.values`, and say which hooks run on the host).
  (door.hidden ??= []).push(...config.files.filter(own));
  setSessionSettings(policy, door);

  const links: LinkEntry[] = registry.list()
    .filter((t) => t.origin.source === "tools_dir" || t.origin.source === "shipped")
    .map((t) => ({ name: t.declaration.name, target: join(t.origin.where, t.declaration.name) }));
  for (const t of registry.list()) {
    if (t.origin.source === "builtin") {
      links.push({ name: t.declaration.name, script: builtinShim(t.declaration.name) });
    }
  }
  // `magi` itself, so a tool's `magi builtin read FILE` works before `deno task install` (a
  // system `magi` on PATH wins, as for every link; a tool named `magi` keeps its link).
  if (!links.some((l) => l.name === "magi")) links.push({ name: "magi", script: magiShim() });
  let linksDir: string | undefined;
  try {
    linksDir = await prepareLinks(join(cacheDir(opts.env), "links"), links, opts.env.PATH ?? "");
  } catch (error) {
    opts.warn(
      `cannot make the tool-links folder: ${
        (error as Error).message
      }; tools cannot call each other by name`,
    );
  }
  // What a read-only sandbox shows again, read-only, when it lies in the system temp folder:
  // the tools' folders, the tool links, magi's own code and the Deno running it.
  (door.needed ??= []).push(
    ...new Set([
      ...registry.list()
        .filter((t) => t.origin.source === "tools_dir" || t.origin.source === "shipped")
        .map((t) => t.origin.where),
      ...(linksDir ? [linksDir] : []),
      fileURLToPath(new URL("../..", import.meta.url)),
      dirname(Deno.execPath()),
      ...(opts.env.DENO_DIR ? [opts.env.DENO_DIR] : []),
    ]),
  );

  // What magi runs later outside any sandbox — its code, Deno, the unsandboxed hooks' and MCP
  // servers' programs — stays read-only wherever a root holds it (sandbox and `write`/`edit`).
  // A sandboxed hook reaches no more than the call that rewrote its script.
  const mcpFile = config.origins.mcp_servers === "default" ? undefined : config.origins.mcp_servers;
  const trusted = trustedProjectFiles(v.trusted_projects ?? []);
  door.runsLater = runsLater(opts.env, [
    ...Object.values(v.hooks).flatMap((list) => list ?? [])
      .filter((h) => hookMode(door.mode, h) === "off")
      .map((h) => ({ line: h.command, cwd: opts.cwd })),
    ...Object.values(v.mcp_servers).filter((s) => s.command).map((s) => ({
      argv: [s.command!, ...s.args ?? []],
      cwd: s.cwd ? resolve(mcpFile ? dirname(mcpFile) : opts.cwd, s.cwd) : opts.cwd,
    })),
    ...configuredPeers(v.peers, config.origins.peers, opts.env, () => {}, host).map((p) => ({
      argv: [p.program],
      cwd: opts.cwd,
    })),
  ], [
    // The folders tools are read from at start: a program planted in a tools_dir has its
    // `--help` run by discovery, outside any sandbox; Lua files run in magi's own Workers.
    ...configured,
    ...luaDirs(config, opts.cwd, opts.env),
    // Where the tools folders' links lead (a tool kept in the project and linked in).
    ...[...configured, ...luaDirs(config, opts.cwd, opts.env)].flatMap(linkTargets),
    // PATH's folders that a root holds outside its own project tree (`~/go/bin`).
    ...pathFolders(opts.env, policy.roots, opts.env.HOME ? realPath(opts.env.HOME) : ""),
    // The XDG config folder where the variable puts it (outside HOME too) and its start-up parts.
    ...xdgStartup(opts.env),
    // Start-up files variables move out of HOME (`GIT_CONFIG_GLOBAL`, `ZDOTDIR`, `BASH_ENV`).
    ...relocatedStartup(opts.env),
    // What a trusted project runs from, however deep a root holds it (its `.magi`, git config).
    ...trusted.present,
    // The files the config names that magi reads at every start: the system prompt's.
    ...configNamedFiles(config),
  ]);
  door.laterMissing = [...configured, ...luaDirs(config, opts.cwd, opts.env)]
    .map((d) => resolve(opts.cwd, d))
    .map((d) => join(realPath(dirname(d)), basename(d))).filter((d) => {
      try {
        Deno.lstatSync(d);
        return false;
      } catch {
        return true;
      }
    });
  // The XDG start-up folders not made yet (`autostart` in a root that is the config folder).
  door.laterMissing.push(...xdgStartupMissing(opts.env), ...trusted.missing);
  // A configured sessions or spill folder is magi's own state wherever it lies (the default
  // ones are inside magi's state folder, hidden already): hidden in every entry point, not
  // only in `magi run` (which shows its own session's folder again).
  for (const dir of [v.sessions_dir, v.spill_dir]) if (dir) (door.hidden ??= []).push(dir);
  // The seccomp filters every sandbox starts with: no file builtin of any session may change
  // them (every sandbox covers the folder already).
  const filters = filterDir();
  if (filters !== scratchDir()) (door.hidden ??= []).push(filters);

  const runtime: Runtime = built.runtime = {
    config,
    registry,
    masker,
    session: { cwd: opts.cwd },
    env: opts.env,
    toolEnv: withoutApiKeys(opts.env, v.providers, v["secrets.pass_env"]),
    context: { ...context, MAGI_APPROVAL_SOCK: socket },
    linksDir,
    spillDir,
    timeoutSeconds: v.timeout_seconds,
    limits: {
      saidBytes: v["limits.said_bytes"],
      shownBytes: v["limits.shown_bytes"],
      spillBytes: v["limits.spill_bytes"],
    },
    found: [...fromDirs, ...fromShipped],
    roots,
    policy,
    door,
    skills,
    hooks: new Hooks(v.hooks, opts.warn, { cwd: opts.cwd, home: opts.env.HOME }),
    warn: opts.warn,
  };
  for (const [server, tools] of early) {
    runtime.registry = withServerTools(runtime.registry, server, tools, opts.warn, mask);
  }
  return runtime;
}

/**
 * The session's door settings: `sandbox` (or the legacy `policy.sandbox`) and `--sandbox`,
 * whether a sandbox starts here (probed once, unless the mode is off), and `approval`.
 *
 * @throws ConfigError for a `--sandbox` value that is no mode
 */
async function doorSettings(
  config: Config,
  policy: Policy,
  opts: RuntimeOptions,
  socket: string | undefined,
): Promise<SessionSettings> {
  const v = config.values;
  const legacy = policy.sandbox;
  let sandbox;
  try {
    sandbox = sandboxSettings(v, opts.sandboxFlag);
  } catch (error) {
    throw error instanceof ConfigError ? error : new ConfigError((error as Error).message);
  }
  // Probed (about 50 ms: bwrap starts once) only where calls are made: `magi tools` needs none.
  const problem = sandbox.mode === "off" || opts.probeSandbox === false
    ? undefined
    : await sandboxProblem(opts.env.PATH ?? "");
  return {
    mode: sandbox.mode,
    // Set by the person (flag, config `sandbox.mode`, legacy `policy.sandbox`): their own
    // `magi call` then runs in it too; otherwise unsandboxed.
    explicit: opts.sandboxFlag !== undefined || Boolean(legacy) ||
      v["sandbox.mode"] !== undefined,
    problem,
    approval: opts.auto ? "never" : v.approval,
    sandbox,
    sockets: socket ? [socket] : [],
  };
}

/**
 * The files the config names that magi reads again later, outside any sandbox (each session
 * start): `system_prompt_file` (resolved against its config file's folder). The hooks', MCP
 * servers' and peers' programs are `runsLater`'s; `tools_dir` and `lua_dirs` are folders.
 */
function configNamedFiles(config: Config): string[] {
  const prompt = config.values.system_prompt_file;
  return typeof prompt === "string" && prompt !== "" ? [prompt] : [];
}

function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

function approvalSocket(policy: Policy, key: string, warn: Warn): string | undefined {
  try {
    return serveApprovals(policy, key);
  } catch (error) {
    warn(`cannot open the approvals socket: ${(error as Error).message}; tools cannot ask`);
    return undefined;
  }
}

/** The text of the tool-links folder's `magi`: runs this same magi with the script's arguments. */
function magiShim(): string {
  return `#!/bin/sh\n# magi\nexec ${selfCommand().map(shellWord).join(" ")} "$@"\n`;
}

/**
 * `env` without the variables that hold a provider's API key (presets and config
 * `providers`), but for those `pass` names.
 */
export function withoutApiKeys(
  env: Record<string, string>,
  providers: Parameters<typeof apiKeyEnvNames>[0],
  pass: readonly string[],
): Record<string, string> {
  const withheld = new Set(apiKeyEnvNames(providers).filter((n) => !pass.includes(n)));
  return Object.fromEntries(Object.entries(env).filter(([k]) => !withheld.has(k)));
}
