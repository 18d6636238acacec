/**
 * The shapes of the config values other layers read: an MCP server, a hook, a policy and its
 * rules (a provider's is in providers.ts, a rule's JSON Schema in rule_schema.ts). They live
 * with the config, below the layers that use them, so the key table can type each key without
 * importing from above; those layers re-export them.
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
  readonly oauth?: {
    readonly client_id?: string;
    readonly client_secret?: string;
    /** The https URL of a Client ID Metadata Document, used as the client id. */
    readonly client_metadata_url?: string;
    /**
     * `"client_credentials"`: a machine client (tokens from the token endpoint, no login);
     * `"id_jag"`: tokens for the person's enterprise ID token (Enterprise-Managed Authorization).
     */
    readonly grant?: "client_credentials" | "id_jag";
    /** A PKCS#8 PEM private key: the client authenticates with a signed JWT (`private_key_jwt`). */
    readonly private_key?: string;
    /** The JWT's algorithm (`ES256`, `RS256`, …); by default the key's own. */
    readonly signing_algorithm?: string;
    /** `grant: "id_jag"`: the identity provider's token endpoint. */
    readonly idp_token_endpoint?: string;
    /** `grant: "id_jag"`: magi's client id at the identity provider. */
    readonly idp_client_id?: string;
    /** `grant: "id_jag"`: the person's ID token from the identity provider. */
    readonly idp_id_token?: string;
  };
  /** Limit for starting, and the most any call to its tools may take, in seconds. */
  readonly timeout_seconds?: number;
  /** Seconds magi's start waits for a server with no cached tool list (default 5). */
  readonly connect_timeout_seconds?: number;
  readonly start?: "lazy" | "eager";
}

/** One configured hook. */
export interface HookSpec {
  command: string;
  /** A regular expression a tool's name must match in full (tool events only). */
  matcher?: string;
  timeout_seconds?: number;
  /** False: the hook runs unsandboxed (default: inside the session's sandbox). */
  sandbox?: boolean;
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
