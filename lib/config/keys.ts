/**
 * Every config key magi knows, with its JSON Schema and what a person should write. A key
 * not listed here is an error (SPEC S10.1). Later features add their keys to this table.
 *
 * @module
 */
import type { JsonSchema } from "../core/types.ts";
import type { DeepReadonly } from "./freeze.ts";
import type { HookEvent, HookSpec, McpServerSpec, PolicyConfig } from "./shapes.ts";
import { type ProviderConfig, PROVIDERS_SCHEMA } from "./providers.ts";
import { closedObject } from "../core/closed_object.ts";
import { RULE_SCHEMA } from "./rule_schema.ts";
import {
  type SandboxMode,
  tightenMode,
  tightenNetwork,
  tightenPolicy,
} from "./sandbox_settings.ts";

/**
 * Who may set a key besides the person's own files (the user's config, `--config`,
 * `MAGI_CONFIG`): any project's `.magi/config.jsonc` ("any", the default), only a project the
 * person lists in `trusted_projects` ("trusted"), or no project at all ("never").
 */
export type ProjectMay = "any" | "trusted" | "never";

/**
 * One known key. `T` is the type of its value once loaded and checked (paths resolved); it
 * becomes the key's field in {@link Settings}.
 */
export interface KeySpec<T = unknown> {
  schema: JsonSchema;
  /** What was expected, for error messages: "an integer of at least 1024". */
  expected: string;
  /** The default value, or undefined when the key has none. */
  default?: T;
  /** Who may set it: see {@link ProjectMay} (default "any"). */
  project?: ProjectMay;
  /** Its row in the README's "Config keys" table: the default as shown, and what it means. */
  doc: { default: string; meaning: string };
  /** Paths in the value resolve against the config file's folder. */
  paths?: boolean;
  /**
   * A project's config may only tighten this key: the value kept from the person's files so
   * far and the project's, combined (SPEC S8.3).
   */
  tighten?(before: unknown, project: unknown): unknown;
  /**
   * Lists from several files are joined instead of the last one winning: a project's config
   * can add secrets to mask but never remove the user's.
   */
  union?: boolean;
}

/** A key with a default: its field is always set. */
type Defaulted<T> = KeySpec<T> & { default: T };

/**
 * Declares a key whose loaded value has type `T`: with a default its {@link Settings} field is
 * `T`, without one `T | undefined`. The JSON Schema checks the value when it is read; `T` says
 * what that schema lets through (tests/config/settings_test.ts checks each default against it).
 */
function key<T>(spec: Defaulted<T>): Defaulted<T>;
function key<T>(spec: KeySpec<T>): KeySpec<T>;
function key<T>(spec: KeySpec<T>): KeySpec<T> {
  return spec;
}

const strings = { type: "array", items: { type: "string" } };

/**
 * The key of a text that may not be empty, with no default (the README row says "—" unless
 * `default` gives its words); with `paths`, a path (see {@link KeySpec.paths}).
 */
function textKey(
  expected: string,
  meaning: string,
  opts: { default?: string; project?: ProjectMay; paths?: true } = {},
): KeySpec<string> {
  const { default: shown = "\u2014", ...rest } = opts;
  return key<string>({
    doc: { default: shown, meaning },
    schema: { type: "string", minLength: 1 },
    expected,
    ...rest,
  });
}

/**
 * The `tighten` of a bound (a size, a count, a time limit): a project's config may lower it,
 * never raise it, so a cloned repository cannot flood the context, the terminal or the clock.
 *
 * @param before the value from the person's files so far (the default when none set it)
 * @param project the project's value
 * @returns the smaller of the two numbers (`before` when either is not a number)
 */
export function lowerOnly(before: unknown, project: unknown): unknown {
  return typeof before === "number" && typeof project === "number"
    ? Math.min(before, project)
    : before;
}

/** A true-or-false key with its default. */
function flagKey(value: boolean, meaning: string): Defaulted<boolean> {
  return plainKey<boolean>({
    meaning,
    schema: { type: "boolean" },
    expected: "true or false",
    default: value,
  });
}

/** A key with a default whose README row shows that default as JSON (`20`, `true`). */
function plainKey<T>(spec: Omit<Defaulted<T>, "doc"> & { meaning: string }): Defaulted<T> {
  const { meaning, ...rest } = spec;
  return key<T>({ ...rest, doc: { default: `\`${JSON.stringify(spec.default)}\``, meaning } });
}

/** A size in bytes from `min` (to `max`), with what a bound means in words (`minIs`). */
interface BytesBounds {
  default: number;
  min: number;
  minIs?: string;
  max?: number;
  maxIs?: string;
  /** The README row's meaning. */
  meaning: string;
}

/** The key of a size in bytes: its schema, `expected` words and doc row made from the bounds. */
function bytesKey(b: BytesBounds): Defaulted<number> {
  const said = (n: number, is?: string) => is ? `${n} (${is})` : `${n}`;
  return key<number>({
    doc: { default: `\`${b.default}\``, meaning: b.meaning },
    schema: { type: "integer", minimum: b.min, ...(b.max === undefined ? {} : { maximum: b.max }) },
    expected: b.max === undefined
      ? `a whole number of bytes, at least ${said(b.min, b.minIs)}`
      : `a whole number of bytes from ${said(b.min, b.minIs)} to ${said(b.max, b.maxIs)}`,
    default: b.default,
    tighten: lowerOnly,
  });
}

/** A folder path or a list of them (`tools_dir`, `lua_dirs`), resolved to absolute paths. */
export type Folders = string | readonly string[];

/** Keys whose value is an object of further keys. */
export const GROUPS = ["limits", "secrets", "sandbox", "agents", "display", "mcp"] as const;

const hookList = {
  type: "array",
  items: closedObject({
    command: { type: "string", minLength: 1 },
    matcher: { type: "string", minLength: 1 },
    timeout_seconds: { type: "number", exclusiveMinimum: 0, maximum: 600 },
    sandbox: { type: "boolean" },
  }, ["command"]),
};

/**
 * Leaf keys, dotted for those inside a group. Keys a project may set only when trusted start
 * programs (tools, peers, MCP servers, hooks), send the conversation and an API key somewhere
 * (providers, a prompt file naming any file), widen what tools may touch (roots), choose where
 * magi writes, or run a model's asks without asking (`approval` "never"). A cloned repository
 * must not do any of that by itself; nor choose what the person is shown (`secrets.values`
 * masks its words as `$SECRET` in approval questions too, `prices` states the cost,
 * `mcp.plain_names` drops a served tool's server from its name). `secrets.ignore` would unmask the person's secrets: no
 * project may set it, trusted or not (it is ignored with one stderr line). Every bound (`limits.*`,
 * `timeout_seconds`, `display.lines`, `agents.*`) a project may only lower ({@link lowerOnly}).
 */
export const KEYS = {
  trusted_projects: key<readonly string[]>({
    doc: {
      default: "`[]`",
      meaning: "project folders whose `.magi/config.jsonc` may name programs, servers, roots",
    },
    project: "trusted",
    union: true,
    schema: { type: "array", items: { type: "string" } },
    expected: "a list of project folders whose .magi/config.jsonc may name programs and servers",
    default: [],
    paths: true,
  }),
  tools_dir: key<Folders>({
    doc: { default: "`[]`", meaning: "folder or folders of tools, relative to the config file" },
    project: "trusted",
    union: true,
    schema: { anyOf: [{ type: "string" }, strings] },
    expected: "a folder path or a list of folder paths",
    default: [],
    paths: true,
  }),
  approval: key<"ask" | "never">({
    doc: {
      default: "`ask`",
      meaning: "`never`: no questions; what no deny rule forbids runs in the `workspace-write` " +
        "sandbox (as `magi run --auto`)",
    },
    project: "trusted",
    schema: { enum: ["ask", "never"] },
    expected: '"ask" (a model\'s call the policy asks about is put to the person) or "never" ' +
      "(no questions: it runs inside the workspace-write sandbox, as with `magi run --auto`)",
    default: "ask",
  }),
  // A project may turn magi's own tools off, not back on when the person turned them off.
  shipped_tools: {
    ...flagKey(true, "include the tools shipped in `tools/`"),
    tighten: (before: unknown, project: unknown) => before === false ? false : project,
  },
  timeout_seconds: key<number>({
    doc: { default: "`120`", meaning: "a call's time limit unless it gives `timeout_seconds`" },
    schema: { type: "number", exclusiveMinimum: 0 },
    expected: "a number of seconds greater than 0",
    default: 120,
    tighten: lowerOnly,
  }),
  "display.lines": plainKey<number>({
    meaning: "lines of a tool call's output shown on the terminal; the rest is kept",
    schema: { type: "integer", minimum: 1, maximum: 100000 },
    expected: "a whole number of lines from 1 to 100000 (each tool call's shown on the terminal)",
    default: 20,
    tighten: lowerOnly,
  }),
  prices: key<Readonly<Record<string, Readonly<Prices>>>>({
    doc: {
      default: "`{}`",
      meaning: 'USD per million tokens, by model: `{"m": {"input", "output", "cached"}}`',
    },
    // What the person is told a session costs: a project setting 0 would hide the spending.
    project: "trusted",
    schema: {
      type: "object",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        properties: {
          input: { type: "number", minimum: 0 },
          output: { type: "number", minimum: 0 },
          cached: { type: "number", minimum: 0 },
        },
      },
    },
    expected: "an object of prices in US dollars per million tokens, by model: " +
      '{"gpt-4o": {"input": 2.5, "output": 10, "cached": 1.25}}',
  }),
  "limits.said_bytes": bytesKey({
    default: 16384,
    min: 1024,
    max: 67108864,
    maxIs: "64 MiB",
    meaning: "bound on what the model reads (1024 to 64 MiB)",
  }),
  "limits.shown_bytes": bytesKey({
    default: 65536,
    min: 1024,
    max: 67108864,
    maxIs: "64 MiB",
    meaning: "bound on what the person sees (1024 to 64 MiB)",
  }),
  "limits.image_bytes": bytesKey({
    default: 5 * 1024 * 1024,
    min: 0,
    minIs: "send no images",
    max: 20971520,
    maxIs: "20 MiB",
    meaning: "largest tool-result image sent to the provider (0 sends none; up to 20 MiB)",
  }),
  "limits.mcp_message_bytes": bytesKey({
    default: 16 * 1024 * 1024,
    min: 65536,
    minIs: "64 KiB",
    max: 1073741824,
    maxIs: "1 GiB",
    meaning: "largest MCP stdio message, either way (64 KiB to 1 GiB)",
  }),
  "limits.spill_bytes": bytesKey({
    default: 256 * 1024 * 1024,
    min: 4096,
    minIs: "a spill file keeps its head and tail",
    meaning: "cap on a spill file (at least 4096); past it the head and tail are kept",
  }),
  "limits.write_bytes": bytesKey({
    default: 32 * 1024 * 1024,
    min: 1024,
    max: 268435456,
    maxIs: "256 MiB",
    meaning: "cap on what one `write` or `edit` brings (1024 to 256 MiB)",
  }),
  "limits.lua_memory_bytes": bytesKey({
    default: 64 * 1024 * 1024,
    min: 1048576,
    minIs: "1 MiB",
    meaning: "cap on the Lua heap (all declarations share one engine)",
  }),
  lua_dirs: key<Folders>({
    doc: {
      default: "`[]`",
      meaning: "folders of `*.lua` declarations, relative to the config file",
    },
    project: "trusted",
    union: true,
    schema: { anyOf: [{ type: "string" }, strings] },
    expected: "a folder path or a list of folder paths (of *.lua declaration files)",
    default: [],
    paths: true,
  }),
  peers: key<Readonly<Record<string, string>>>({
    doc: {
      default: "`casper` on PATH",
      meaning: 'peer programs by name: `{"casper": "/usr/local/bin/casper"}`',
    },
    project: "trusted",
    schema: {
      type: "object",
      propertyNames: { pattern: "^[a-zA-Z0-9_-]{1,32}$" },
      additionalProperties: { type: "string", minLength: 1 },
    },
    expected: 'an object of peers by name, each a program: {"casper": "/usr/local/bin/casper"}',
  }),
  "secrets.env": key<readonly string[]>({
    doc: {
      default: "`[]`",
      meaning: "more variable names whose values are masked (joined across files)",
    },
    union: true,
    schema: strings,
    expected: "a list of environment variable names",
    default: [],
  }),
  "secrets.values": key<readonly string[]>({
    doc: { default: "`[]`", meaning: "literal values to mask, as `$SECRET` (joined across files)" },
    // Masked in what the person sees too: a project's words would hide from the person what a
    // question asks them to approve (a domain fetched from, a failing test's line).
    project: "trusted",
    union: true,
    schema: strings,
    expected: "a list of secret values (strings)",
    default: [],
  }),
  "secrets.ignore": key<readonly string[]>({
    doc: {
      default: "`[]`",
      meaning: "variable names that are not secrets (your own config only; joined)",
    },
    project: "never",
    union: true,
    schema: strings,
    expected: "a list of environment variable names that are not secrets",
    default: [],
  }),
  "secrets.pass_env": key<readonly string[]>({
    doc: {
      default: "`[]`",
      meaning: "providers' API-key variables tools may still see (your own config only; joined)",
    },
    project: "never",
    union: true,
    schema: strings,
    expected: "a list of environment variable names a tool may still see",
    default: [],
  }),
  roots: key<readonly string[]>({
    doc: {
      default: "start directory and the session's temp folder",
      meaning: "folders read, write, edit and grep may touch, relative to the config file",
    },
    project: "trusted",
    schema: { type: "array", items: { type: "string", minLength: 1 } },
    expected: "a list of folder paths (read, write, edit and grep stay inside them)",
    paths: true,
  }),
  spill_dir: textKey("a folder path", "where whole outputs are spilled", {
    default: "`$XDG_STATE_HOME/magi/spill`",
    project: "trusted",
    paths: true,
  }),
  providers: key<Readonly<Record<string, Readonly<ProviderConfig>>>>({
    doc: {
      default: "presets",
      meaning: "model providers by name (see [The agent](#the-agent-magi-run-and-magi-chat))",
    },
    project: "trusted",
    schema: PROVIDERS_SCHEMA,
    expected:
      'an object of providers: {"NAME": {"kind": "openai" | "anthropic", "base_url", "model", ' +
      '"api_key_env", "timeout_seconds", "max_retries", "max_tokens", "parallel_tool_calls", ' +
      '"context_window", "server", "compact_at", "thinking_budget", "reasoning_effort"}}',
  }),
  provider: textKey(
    "the name of a provider",
    "the provider `magi run` and `magi chat` use unless `--provider` is given",
    { project: "trusted" },
  ),
  sessions_dir: textKey("a folder path", "where sessions are kept", {
    default: "`$XDG_STATE_HOME/magi/sessions`",
    project: "trusted",
    paths: true,
  }),
  "sandbox.mode": key<SandboxMode>({
    doc: {
      default: "`workspace-write`",
      meaning: "the most a model's approved call gets: `read-only`, `workspace-write`, `off`",
    },
    schema: { enum: ["read-only", "workspace-write", "off"] },
    expected: '"read-only", "workspace-write" (the default) or "off"',
    tighten: tightenMode,
  }),
  "sandbox.network": key<boolean | readonly string[]>({
    doc: {
      default: "`false`",
      meaning: '`true`, or a list of domains (`"*.npmjs.org"`, ports 80 and 443; ' +
        '`"host:8080"`) reached by proxy',
    },
    schema: {
      anyOf: [{ type: "boolean" }, {
        type: "array",
        items: {
          type: "string",
          pattern: "^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[1-9][0-9]{0,4})?$",
        },
      }],
    },
    expected: 'true, false (the default) or a list of allowed domains ("*.npmjs.org"; ' +
      'ports 80 and 443 unless one is named: "localhost:8080")',
    tighten: tightenNetwork,
  }),
  "sandbox.unix_sockets": key<boolean>({
    doc: {
      default: "`false`",
      meaning: "`true` lets sandboxed programs make unix sockets (each socket outside then " +
        "covered by a mount, as before)",
    },
    schema: { type: "boolean" },
    expected: "true or false (the default)",
    // A project's config may refuse them, never allow them.
    tighten: (before: unknown, project: unknown) => before === true ? project : false,
  }),
  "sandbox.deny_read": key<readonly string[]>({
    doc: { default: "`[]`", meaning: "more absolute or `~/` paths hidden from sandboxed programs" },
    union: true,
    schema: { type: "array", items: { type: "string", pattern: "^(/|~/)" } },
    expected: 'a list of absolute or "~/" paths to hide from sandboxed programs',
  }),
  policy: key<PolicyConfig>({
    doc: {
      default: "the default rules",
      meaning: "rules, and default rules to disable: see [What may run](#what-may-run-the-policy)",
    },
    tighten: tightenPolicy,
    schema: {
      type: "object",
      additionalProperties: false,
      properties: {
        rules: { type: "array", items: RULE_SCHEMA },
        disable: { type: "array", items: { type: "string" } },
        sandbox: {
          anyOf: [{ type: "boolean" }, {
            type: "object",
            additionalProperties: false,
            properties: { network: { type: "boolean" } },
          }],
        },
      },
    },
    expected: 'an object {rules?: [{tool, decision: "allow" | "ask" | "deny", id?, source?, ' +
      "command?, fields?, where?, reason?, examples?}], disable?: [default rule ids], " +
      'sandbox?: true | false | {"network": true}}',
  }),
  system_prompt: textKey(
    "the text that replaces magi's opening lines of the system prompt",
    "text that replaces magi's opening lines of the system prompt",
    { default: "magi's opening lines" },
  ),
  system_prompt_file: textKey(
    "a file whose text replaces magi's opening lines of the system prompt",
    "a file whose text does that (wins over `system_prompt`; trusted projects)",
    { project: "trusted", paths: true },
  ),
  hooks: key<Readonly<Partial<Record<HookEvent, readonly HookSpec[]>>>>({
    doc: {
      default: "`{}`",
      meaning: "programs run at `before_tool`, `after_tool`, `session_start`, `user_prompt`",
    },
    project: "trusted",
    schema: {
      type: "object",
      properties: {
        before_tool: hookList,
        after_tool: hookList,
        session_start: hookList,
        user_prompt: hookList,
      },
      additionalProperties: false,
    },
    expected: "an object {before_tool?, after_tool?, session_start?, user_prompt?}, each a list " +
      "of {command, matcher?, timeout_seconds?, sandbox?} (matcher: a regular expression over " +
      "tool names; sandbox: false runs it unsandboxed)",
    default: {},
  }),
  "agents.max_depth": plainKey<number>({
    meaning:
      "how many levels of sub-agents may start (0: none; at most 8; a project may only lower it)",
    schema: { type: "integer", minimum: 0, maximum: 8 },
    expected: "a whole number from 0 (no sub-agents) to 8",
    default: 2,
    // Deeper sub-agents multiply what a task spends of the person's provider: a project may
    // only lower it.
    tighten: lowerOnly,
  }),
  "agents.summary_bytes": bytesKey({
    default: 4096,
    min: 256,
    max: 65536,
    meaning: "bound on a sub-agent's summary the parent reads (256 to 65536)",
  }),
  "mcp.audience_pair": flagKey(
    false,
    "`magi mcp` results as said + shown blocks marked by `audience` (see MCP)",
  ),
  // A served tool's name says which server it comes from: a project may not drop that.
  "mcp.plain_names": {
    ...flagKey(
      false,
      "`magi mcp` serves an upstream tool or prompt under its own name when unique",
    ),
    project: "trusted" as const,
  },
  mcp_servers: key<Readonly<Record<string, McpServerSpec>>>({
    doc: { default: "`{}`", meaning: "MCP servers whose tools join the registry (see MCP below)" },
    project: "trusted",
    schema: {
      type: "object",
      propertyNames: { pattern: "^[a-zA-Z0-9-]{1,32}$" },
      additionalProperties: {
        oneOf: [
          {
            type: "object",
            required: ["command"],
            properties: {
              command: { type: "string", minLength: 1 },
              args: strings,
              env: { type: "object", additionalProperties: { type: "string" } },
              cwd: { type: "string", minLength: 1 },
              timeout_seconds: { type: "number", exclusiveMinimum: 0 },
              connect_timeout_seconds: { type: "number", exclusiveMinimum: 0 },
              start: { enum: ["lazy", "eager"] },
            },
            additionalProperties: false,
          },
          {
            type: "object",
            required: ["url"],
            properties: {
              url: { type: "string", pattern: "^https?://" },
              headers: { type: "object", additionalProperties: { type: "string" } },
              oauth: {
                type: "object",
                properties: {
                  client_id: { type: "string", minLength: 1 },
                  client_secret: { type: "string", minLength: 1 },
                  client_metadata_url: { type: "string", pattern: "^https://[^/]+/." },
                  grant: { enum: ["client_credentials", "id_jag"] },
                  private_key: { type: "string", minLength: 1 },
                  signing_algorithm: {
                    enum: [
                      "RS256",
                      "RS384",
                      "RS512",
                      "PS256",
                      "PS384",
                      "PS512",
                      "ES256",
                      "ES384",
                      "ES512",
                    ],
                  },
                  idp_token_endpoint: { type: "string", pattern: "^https?://" },
                  idp_client_id: { type: "string", minLength: 1 },
                  idp_id_token: { type: "string", minLength: 1 },
                },
                dependentRequired: {
                  private_key: ["client_id", "grant"],
                  signing_algorithm: ["private_key"],
                  idp_token_endpoint: ["grant"],
                  idp_client_id: ["grant"],
                  idp_id_token: ["grant"],
                },
                anyOf: [
                  { required: ["client_id"], not: { required: ["grant"] } },
                  {
                    required: ["client_id", "grant"],
                    properties: { grant: { const: "client_credentials" } },
                    oneOf: [{ required: ["client_secret"] }, { required: ["private_key"] }],
                  },
                  {
                    required: ["client_id", "grant", "idp_token_endpoint", "idp_id_token"],
                    properties: { grant: { const: "id_jag" } },
                  },
                  { required: ["client_metadata_url"], not: { required: ["grant"] } },
                ],
                additionalProperties: false,
              },
              timeout_seconds: { type: "number", exclusiveMinimum: 0 },
              connect_timeout_seconds: { type: "number", exclusiveMinimum: 0 },
              start: { enum: ["lazy", "eager"] },
            },
            additionalProperties: false,
          },
        ],
      },
    },
    expected: 'an object of MCP servers by name (letters, digits, "-"), each ' +
      "{command, args?, env?, cwd?, timeout_seconds?, connect_timeout_seconds?, start?} or " +
      "{url, headers?, oauth?: {client_id, client_secret?} or {client_metadata_url} or " +
      '{client_id, client_secret or private_key, grant: "client_credentials"} or ' +
      '{client_id, client_secret?, grant: "id_jag", idp_token_endpoint, idp_id_token, idp_client_id?}, ' +
      "timeout_seconds?, " +
      'connect_timeout_seconds?, start?} with start "lazy" ' +
      'or "eager"',
    default: {},
  }),
};

/** Config `prices`: US dollars per million tokens of one model. */
export interface Prices {
  input?: number;
  output?: number;
  cached?: number;
}

/** A known key's name, dotted for those inside a group ("limits.said_bytes"). */
export type KeyName = keyof typeof KEYS;

/** The type of a key's field: its value's type, or that or undefined when it has no default. */
export type FieldOf<S> = S extends { default: infer T } ? T
  : S extends KeySpec<infer T> ? T | undefined
  : never;

/**
 * The effective config, typed: one field per key of {@link KEYS}, by its dotted name. Built
 * once by `loadConfig()` and frozen (arrays and objects inside too).
 */
export type Settings = DeepReadonly<Values>;

/** One value per key, by its type in the table, as one config file's checked keys hold them. */
export type Values = { [K in KeyName]: FieldOf<(typeof KEYS)[K]> };

/** The table as the loader reads it: any key's spec by its name. */
export const TABLE: Readonly<Record<string, KeySpec>> = KEYS;

/** Keys a project may set only when the person's own config lists it in `trusted_projects`. */
export const PROJECT_TRUSTED_ONLY: readonly string[] = Object.keys(KEYS)
  .filter((k) => TABLE[k].project === "trusted");

/** Keys a project's config may never set, trusted or not (ignored with one stderr line). */
export const PROJECT_NEVER: readonly string[] = Object.keys(KEYS)
  .filter((k) => TABLE[k].project === "never");
