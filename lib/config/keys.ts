/**
 * Every config key magi knows, with its JSON Schema and what a person should write. A key
 * not listed here is an error (SPEC S10.1). Later features add their keys to this table.
 *
 * @module
 */
import type { JsonSchema } from "../core/types.ts";
import { closedObject } from "../core/closed_object.ts";
import { PROVIDERS_SCHEMA } from "./providers.ts";
import { RULE_SCHEMA } from "./rule_schema.ts";
import { tightenMode, tightenNetwork, tightenPolicy } from "./sandbox_settings.ts";

/** One known key. */
export interface KeySpec {
  schema: JsonSchema;
  /** What was expected, for error messages: "an integer of at least 1024". */
  expected: string;
  /** The default value, or undefined when the key has none. */
  default?: unknown;
  /** Paths in the value resolve against the config file's folder. */
  paths?: boolean;
  /**
   * A project's config may only tighten this key: the value kept from the person's files so
   * far and the project's, combined (SPEC S8.3).
   */
  tighten?: (before: unknown, project: unknown) => unknown;
  /**
   * Lists from several files are joined instead of the last one winning: a project's config
   * can add secrets to mask but never remove the user's.
   */
  union?: boolean;
}

const strings = { type: "array", items: { type: "string" } };

/** The key of a text that may not be empty; with `paths`, a path (see {@link KeySpec.paths}). */
function textKey(expected: string, opts: { paths?: true } = {}): KeySpec {
  return { schema: { type: "string", minLength: 1 }, expected, ...opts };
}

/** A size in bytes from `min` (to `max`), with what each bound means in words (`minIs`). */
interface BytesBounds {
  default: number;
  min: number;
  minIs?: string;
  max?: number;
  maxIs?: string;
}

/** The key of a size in bytes: its schema and its `expected` words both made from the bounds. */
function bytesKey(b: BytesBounds): KeySpec {
  const said = (n: number, is?: string) => is ? `${n} (${is})` : `${n}`;
  return {
    schema: { type: "integer", minimum: b.min, ...(b.max === undefined ? {} : { maximum: b.max }) },
    expected: b.max === undefined
      ? `a whole number of bytes, at least ${said(b.min, b.minIs)}`
      : `a whole number of bytes from ${said(b.min, b.minIs)} to ${said(b.max, b.maxIs)}`,
    default: b.default,
  };
}

/**
 * Keys a project's `.magi/config.jsonc` may set only when the person's own config lists the
 * project in `trusted_projects`: they start programs (tools, peers, MCP servers), send the
 * conversation and an API key somewhere (providers), widen what tools may touch (roots), or
 * choose where magi writes. A cloned repository must not do any of that by itself.
 */
export const PROJECT_TRUSTED_ONLY = [
  "tools_dir",
  "lua_dirs",
  "peers",
  "mcp_servers",
  "providers",
  "provider",
  "roots",
  "spill_dir",
  "sessions_dir",
  "trusted_projects",
  // "never" runs a model's asks without asking.
  "approval",
  // Hooks are programs; a prompt file could name any file to send to the provider.
  "hooks",
  "system_prompt_file",
];

/**
 * Keys a project's config may never set, trusted or not: `secrets.ignore` would unmask the
 * person's secrets. They are ignored with one stderr line.
 */
export const PROJECT_NEVER = ["secrets.ignore"];

/** Keys whose value is an object of further keys. */
export const GROUPS = ["limits", "secrets", "sandbox", "agents", "display", "mcp"] as const;

const hookList = {
  type: "array",
  items: closedObject({
    command: { type: "string", minLength: 1 },
    matcher: { type: "string", minLength: 1 },
    timeout_seconds: { type: "number", exclusiveMinimum: 0, maximum: 600 },
  }, ["command"]),
};

/** Leaf keys, dotted for those inside a group. */
export const KEYS: Record<string, KeySpec> = {
  trusted_projects: {
    union: true,
    schema: { type: "array", items: { type: "string" } },
    expected: "a list of project folders whose .magi/config.jsonc may name programs and servers",
    default: [],
    paths: true,
  },
  tools_dir: {
    union: true,
    schema: { anyOf: [{ type: "string" }, strings] },
    expected: "a folder path or a list of folder paths",
    default: [],
    paths: true,
  },
  approval: {
    schema: { enum: ["ask", "never"] },
    expected: '"ask" (a model\'s call the policy asks about is put to the person) or "never" ' +
      "(no questions: it runs inside the workspace-write sandbox, as with `magi run --auto`)",
    default: "ask",
  },
  shipped_tools: {
    schema: { type: "boolean" },
    expected: "true or false",
    default: true,
  },
  timeout_seconds: {
    schema: { type: "number", exclusiveMinimum: 0 },
    expected: "a number of seconds greater than 0",
    default: 120,
  },
  "display.lines": {
    schema: { type: "integer", minimum: 1, maximum: 100000 },
    expected: "a whole number of lines from 1 to 100000 (each tool call's shown on the terminal)",
    default: 20,
  },
  prices: {
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
  },
  "limits.said_bytes": bytesKey({ default: 16384, min: 1024, max: 67108864, maxIs: "64 MiB" }),
  "limits.shown_bytes": bytesKey({ default: 65536, min: 1024, max: 67108864, maxIs: "64 MiB" }),
  "limits.image_bytes": bytesKey({
    default: 5 * 1024 * 1024,
    min: 0,
    minIs: "send no images",
    max: 20971520,
    maxIs: "20 MiB",
  }),
  "limits.mcp_message_bytes": bytesKey({
    default: 16 * 1024 * 1024,
    min: 65536,
    minIs: "64 KiB",
    max: 1073741824,
    maxIs: "1 GiB",
  }),
  "limits.spill_bytes": bytesKey({
    default: 256 * 1024 * 1024,
    min: 4096,
    minIs: "a spill file keeps its head and tail",
  }),
  "limits.write_bytes": bytesKey({
    default: 32 * 1024 * 1024,
    min: 1024,
    max: 268435456,
    maxIs: "256 MiB",
  }),
  "limits.lua_memory_bytes": bytesKey({ default: 64 * 1024 * 1024, min: 1048576, minIs: "1 MiB" }),
  lua_dirs: {
    union: true,
    schema: { anyOf: [{ type: "string" }, strings] },
    expected: "a folder path or a list of folder paths (of *.lua declaration files)",
    default: [],
    paths: true,
  },
  peers: {
    schema: {
      type: "object",
      propertyNames: { pattern: "^[a-zA-Z0-9_-]{1,32}$" },
      additionalProperties: { type: "string", minLength: 1 },
    },
    expected: 'an object of peers by name, each a program: {"casper": "/usr/local/bin/casper"}',
  },
  "secrets.env": {
    union: true,
    schema: strings,
    expected: "a list of environment variable names",
    default: [],
  },
  "secrets.values": {
    union: true,
    schema: strings,
    expected: "a list of secret values (strings)",
    default: [],
  },
  "secrets.ignore": {
    union: true,
    schema: strings,
    expected: "a list of environment variable names that are not secrets",
    default: [],
  },
  roots: {
    schema: { type: "array", items: { type: "string", minLength: 1 } },
    expected: "a list of folder paths (read, write, edit and grep stay inside them)",
    paths: true,
  },
  spill_dir: textKey("a folder path", { paths: true }),
  providers: {
    schema: PROVIDERS_SCHEMA,
    expected:
      'an object of providers: {"NAME": {"kind": "openai" | "anthropic", "base_url", "model", ' +
      '"api_key_env", "timeout_seconds", "max_retries", "max_tokens", "parallel_tool_calls", ' +
      '"context_window", "server", "compact_at", "thinking_budget", "reasoning_effort"}}',
  },
  provider: textKey("the name of a provider"),
  sessions_dir: textKey("a folder path", { paths: true }),
  "sandbox.mode": {
    schema: { enum: ["read-only", "workspace-write", "off"] },
    expected: '"read-only", "workspace-write" (the default) or "off"',
    tighten: tightenMode,
  },
  "sandbox.network": {
    schema: {
      anyOf: [{ type: "boolean" }, {
        type: "array",
        items: { type: "string", pattern: "^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$" },
      }],
    },
    expected: 'true, false (the default) or a list of allowed domains ("*.npmjs.org")',
    tighten: tightenNetwork,
  },
  "sandbox.deny_read": {
    union: true,
    schema: { type: "array", items: { type: "string", pattern: "^(/|~/)" } },
    expected: 'a list of absolute or "~/" paths to hide from sandboxed programs',
  },
  policy: {
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
  },
  system_prompt: textKey("the text that replaces magi's opening lines of the system prompt"),
  system_prompt_file: textKey(
    "a file whose text replaces magi's opening lines of the system prompt",
    { paths: true },
  ),
  hooks: {
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
      "of {command, matcher?, timeout_seconds?} (matcher: a regular expression over tool names)",
    default: {},
  },
  "agents.max_depth": {
    schema: { type: "integer", minimum: 0, maximum: 8 },
    expected: "a whole number from 0 (no sub-agents) to 8",
    default: 2,
    // Deeper sub-agents multiply what a task spends of the person's provider: a project may
    // only lower it.
    tighten: (before, project) =>
      typeof before === "number" && typeof project === "number"
        ? Math.min(before, project)
        : before,
  },
  "agents.summary_bytes": bytesKey({ default: 4096, min: 256, max: 65536 }),
  "mcp.audience_pair": {
    schema: { type: "boolean" },
    expected: "true or false",
    default: false,
  },
  "mcp.plain_names": {
    schema: { type: "boolean" },
    expected: "true or false",
    default: false,
  },
  mcp_servers: {
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
              oauth: closedObject({
                client_id: { type: "string", minLength: 1 },
                client_secret: { type: "string", minLength: 1 },
              }, ["client_id"]),
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
      "{url, headers?, oauth?: {client_id, client_secret?}, timeout_seconds?, " +
      'connect_timeout_seconds?, start?} with start "lazy" ' +
      'or "eager"',
    default: {},
  },
};
