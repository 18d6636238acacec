/**
 * The shapes of the config values other layers read: an MCP server, a provider, a hook, a
 * policy and its rules (with a rule's JSON Schema). They live with the config (below the layers that use them), so the
 * key table can type each key without importing from above; those layers re-export them.
 *
 * @module
 */

/** One entry of config `mcp_servers`: a program to start, or a URL. */
export interface McpServerSpec {
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory; relative to the config file's folder. */
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A client registered with the server's authorization server beforehand (no registration). */
  readonly oauth?: { readonly client_id: string; readonly client_secret?: string };
  /** Limit for starting, and the most any call to its tools may take, in seconds. */
  readonly timeout_seconds?: number;
  /** Seconds magi's start waits for a server with no cached tool list (default 5). */
  readonly connect_timeout_seconds?: number;
  readonly start?: "lazy" | "eager";
}

/** How a provider is configured (config `providers.NAME`). */
export interface ProviderConfig {
  kind: "openai" | "anthropic";
  /** Base URL, such as `http://localhost:11434/v1`; the SDK's default when absent. */
  base_url?: string;
  model?: string;
  /** The environment variable holding the API key (its value is masked everywhere). */
  api_key_env?: string;
  /** Time limit of one request in seconds (default 600). */
  timeout_seconds?: number;
  /** Retries on 429, 5xx and dropped connections (default 3). */
  max_retries?: number;
  /** The longest answer in tokens, sent to every provider (default 8192). */
  max_tokens?: number;
  /** The model's context window in tokens; else the server's word, else a known default. */
  context_window?: number;
  /** Which server to ask for its context window: `llamacpp`, `ollama` or `vllm`. */
  server?: "llamacpp" | "ollama" | "vllm";
  /** Compact when a request would pass this share of the window (default 0.8). */
  compact_at?: number;
  /** Ask for extended thinking with this budget in tokens (Anthropic; at least 1024). */
  thinking_budget?: number;
  /** `reasoning_effort` to send (OpenAI-compatible reasoning models). */
  reasoning_effort?: "minimal" | "low" | "medium" | "high";
  /**
   * Send `parallel_tool_calls` (OpenAI-compatible only): llama.cpp makes several calls in one
   * answer only when asked; some OpenAI models refuse the field. Not sent by default.
   */
  parallel_tool_calls?: boolean;
}

/** One configured hook. */
export interface HookSpec {
  command: string;
  /** A regular expression a tool's name must match in full (tool events only). */
  matcher?: string;
  timeout_seconds?: number;
}

/** What a rule decides; `deny` is stricter than `ask`, which is stricter than `allow`. */
export type Decision = "allow" | "ask" | "deny";

/** Where a call's paths lead. */
export type Where = "inside_roots" | "outside_roots";

/** A rule as config writes it (key `policy.rules`). */
export interface RuleConfig {
  /** A name for messages; defaults to `rule N`. */
  id?: string;
  /** A glob over tool names (picomatch: `*`, `{a,b}`, `!(x)`). */
  tool: string;
  /** Only tools from these sources: "builtin", "tools_dir", "shipped", "lua", "mcp". */
  source?: string | string[];
  /** For `run`: patterns matched against each simple command of the line (see README). */
  command?: string | string[];
  /** Field name → wildcard pattern (`*` any characters) matched against the field's text. */
  fields?: Record<string, string>;
  /** Only calls whose paths all lie inside the roots, or some path outside them. */
  where?: Where;
  decision: Decision;
  /** Why, shown with the decision. */
  reason?: string;
  /** Calls the rule must match and must not match, checked when the config loads. */
  examples?: { match?: unknown[]; no_match?: unknown[] };
}

/** The settings of the old `policy.sandbox` key (mapped to workspace-write). */
export interface SandboxConfig {
  network?: boolean;
}

/** Config key `policy`. */
export interface PolicyConfig {
  rules?: RuleConfig[];
  disable?: string[];
  sandbox?: boolean | SandboxConfig;
}

/** The events hooks run at (config `hooks` keys). */
export type HookEvent = "before_tool" | "after_tool" | "session_start" | "user_prompt";

/** What a rule's `source` may name: where a tool came from (`project`: a project's `.magi/tools`). */
export const RULE_SOURCES = ["builtin", "tools_dir", "shipped", "lua", "project", "peer", "mcp"];

/** The JSON Schema of one rule (config key `policy.rules` items). */
export const RULE_SCHEMA = {
  type: "object",
  required: ["tool", "decision"],
  additionalProperties: false,
  properties: {
    id: { type: "string", minLength: 1 },
    tool: { type: "string", minLength: 1 },
    source: {
      anyOf: [{ enum: RULE_SOURCES }, { type: "array", items: { enum: RULE_SOURCES } }],
    },
    command: {
      anyOf: [{ type: "string", minLength: 1 }, {
        type: "array",
        items: { type: "string", minLength: 1 },
        minItems: 1,
      }],
    },
    fields: { type: "object", additionalProperties: { type: "string" } },
    where: { enum: ["inside_roots", "outside_roots"] },
    decision: { enum: ["allow", "ask", "deny"] },
    reason: { type: "string" },
    examples: {
      type: "object",
      additionalProperties: false,
      properties: {
        match: { type: "array", items: { type: "object" } },
        no_match: { type: "array", items: { type: "object" } },
      },
    },
  },
};
