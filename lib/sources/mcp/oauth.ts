/**
 * OAuth 2.1 for remote MCP servers, through the SDK's client auth (`authProvider` of its
 * Streamable HTTP transport: discovery, dynamic client registration, PKCE, refresh). What a
 * server's login leaves — the registered client, the tokens, the PKCE verifier — is kept in
 * one private file per server (`$XDG_STATE_HOME/magi/mcp-oauth/<key>.json`, 0600 in a 0700
 * folder; the key is the server's cache key). `magi mcp login NAME` runs the browser flow
 * with a loopback redirect; any other start uses the stored tokens, and a server that needs a
 * login it has not had fails with one line saying to run it.
 *
 * @module
 */
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { writePrivateFile } from "../../core/private.ts";

/** What is kept for one server. */
interface Stored {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  verifier?: string;
  redirect?: string;
  /** Where its metadata was found (RFC 9728, RFC 8414), for refreshing and logging in again. */
  discovery?: OAuthDiscoveryState;
  /** The scope a request was refused for (403 `insufficient_scope`): the next login asks it. */
  wanted?: string;
}

/**
 * How magi is known to the server's authorization server (config `mcp_servers.NAME.oauth`):
 * a client registered beforehand (`client_id`, with `client_secret` for a confidential one),
 * or the https URL of a Client ID Metadata Document the person publishes
 * (`client_metadata_url`), used as the client id where the authorization server declares
 * `client_id_metadata_document_supported`; otherwise magi registers itself dynamically.
 */
export interface PreRegistered {
  client_id?: string;
  client_secret?: string;
  client_metadata_url?: string;
  /**
   * `"client_credentials"`: magi is a machine client with its own id and secret (the OAuth
   * extension for machine-to-machine access): tokens come from the token endpoint at once,
   * with no browser and no login.
   */
  grant?: "client_credentials";
}

/** Thrown (as the connection's error) when a server needs `magi mcp login NAME`. */
export class LoginNeeded extends Error {}

/**
 * The SDK's `OAuthClientProvider` over one server's file. `open` receives the
 * authorization URL: in `magi mcp login` it sends the person's browser there; elsewhere it
 * is undefined and a needed login fails with {@link LoginNeeded}.
 */
export class StoredOAuth implements OAuthClientProvider {
  #redirect: string | undefined;
  readonly #open: ((url: URL) => void | Promise<void>) | undefined;
  readonly #client: PreRegistered | undefined;
  readonly #state: (() => string) | undefined;

  /**
   * @param opts.open sends the person to the authorization URL (`magi mcp login`)
   * @param opts.redirect the loopback redirect URL of this login
   * @param opts.state gives the `state` the authorization request carries (this login's,
   *   checked by its redirect listener)
   * @param opts.client a client registered beforehand (config `oauth`): used as it is, never
   *   registered dynamically; with a secret it authenticates (the SDK picks
   *   `client_secret_basic` or `client_secret_post` from the server's metadata)
   */
  constructor(
    private readonly server: string,
    private readonly file: string,
    opts: {
      open?: (url: URL) => void | Promise<void>;
      redirect?: string;
      state?: () => string;
      client?: PreRegistered;
    } = {},
  ) {
    this.#state = opts.state;
    this.#redirect = opts.redirect;
    this.#open = opts.open;
    this.#client = opts.client;
  }

  /** The file for server `key` under the folder `dir`. */
  static fileFor(dir: string, key: string): string {
    return join(dir, `${key}.json`);
  }

  #read(): Stored {
    try {
      return JSON.parse(Deno.readTextFileSync(this.file)) as Stored;
    } catch {
      return {};
    }
  }

  #write(change: Partial<Stored>): void {
    writePrivateFile(this.file, JSON.stringify({ ...this.#read(), ...change }));
  }

  /** The authorization request's `state`: this login's; outside a login none is needed. */
  state(): string {
    return this.#state?.() ?? "";
  }

  /** The Client ID Metadata Document's URL (config `oauth.client_metadata_url`), if any. */
  get clientMetadataUrl(): string | undefined {
    return this.#client?.client_metadata_url;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.#write({ discovery });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#read().discovery;
  }

  /** Forgets what the server said is no longer valid. */
  invalidateCredentials(what: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    const stored = this.#read();
    if (what === "all" || what === "client") delete stored.client;
    if (what === "all" || what === "tokens") delete stored.tokens;
    if (what === "all" || what === "verifier") delete stored.verifier;
    if (what === "all" || what === "discovery") delete stored.discovery;
    writePrivateFile(this.file, JSON.stringify(stored));
  }

  /**
   * Notes that a request was refused for want of `scope` (a 403 `insufficient_scope`): the
   * next `magi mcp login` asks for it, with the scope the tokens have.
   */
  noteWantedScope(scope: string): void {
    const had = this.#read().tokens?.scope?.split(" ") ?? [];
    const all = [...new Set([...had, ...scope.split(" ")].filter(Boolean))].join(" ");
    this.#write({ wanted: all });
  }

  /** The scope a refused request wanted, until a login got it. */
  wantedScope(): string | undefined {
    return this.#read().wanted;
  }

  /** Forgets the wanted scope (a login got it). */
  gotWantedScope(): void {
    const stored = this.#read();
    delete stored.wanted;
    writePrivateFile(this.file, JSON.stringify(stored));
  }

  /**
   * `fetch` that notes the scope of each 403 `insufficient_scope` answer
   * ({@link noteWantedScope}): the SDK refreshes the token on one (a refresh never adds
   * scope), so without a note the next login would not know to ask for more.
   */
  watching(inner: typeof fetch = fetch): typeof fetch {
    return async (input, init) => {
      const response = await inner(input, init);
      const challenge = response.status === 403 ? response.headers.get("www-authenticate") : null;
      if (challenge && /error="?insufficient_scope/.test(challenge)) {
        const scope = challenge.match(/scope="([^"]*)"/)?.[1];
        if (scope) this.noteWantedScope(scope);
      }
      return response;
    };
  }

  /** The loopback redirect; none for client credentials (the SDK then asks for tokens at once). */
  get redirectUrl(): string | undefined {
    if (this.#machine) return undefined;
    return this.#redirect ?? this.#read().redirect ?? "http://127.0.0.1/callback";
  }

  get #machine(): boolean {
    return this.#client?.grant === "client_credentials";
  }

  /** The token request of the client credentials grant; the SDK's default otherwise. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.#machine) return undefined;
    return new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) });
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.#machine) {
      return {
        client_name: "magi",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        token_endpoint_auth_method: "client_secret_basic",
      };
    }
    return {
      client_name: "magi",
      redirect_uris: [this.redirectUrl!],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.#client?.client_secret ? "client_secret_basic" : "none",
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const own = this.#client;
    if (own?.client_id) {
      return {
        client_id: own.client_id,
        ...(own.client_secret ? { client_secret: own.client_secret } : {}),
      };
    }
    const stored = this.#read();
    // A client registered for another redirect (an earlier login's port) is registered again.
    return stored.redirect === this.redirectUrl ? stored.client : undefined;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#write({ client, redirect: this.redirectUrl });
  }

  tokens(): OAuthTokens | undefined {
    return this.#read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#write({ tokens });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.#open) {
      const wanted = this.#read().wanted;
      throw new LoginNeeded(
        wanted && this.#read().tokens
          ? `it needs more access (scope "${wanted}"): run \`magi mcp login ${this.server}\``
          : `it needs an OAuth login: run \`magi mcp login ${this.server}\``,
      );
    }
    await this.#open(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#write({ verifier });
  }

  codeVerifier(): string {
    const verifier = this.#read().verifier;
    if (!verifier) throw new Error("no PKCE verifier was saved for this login");
    return verifier;
  }
}
