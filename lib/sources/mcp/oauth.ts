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
import type {
  AddClientAuthentication,
  OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
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
  grant?: "client_credentials" | "id_jag";
  /**
   * A PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`): the client authenticates at the
   * token endpoint with a JWT it signs (`private_key_jwt`, RFC 7523) instead of a secret.
   */
  private_key?: string;
  /** The JWT's algorithm (`RS256`, `PS256`, `ES256`, …); by default the key's own. */
  signing_algorithm?: string;
  /**
   * `grant: "id_jag"` (Enterprise-Managed Authorization, SEP-990): the enterprise identity
   * provider's token endpoint, magi's client id there, and the person's ID token from it. The
   * ID token is exchanged there (RFC 8693) for an Identity Assertion JWT Authorization Grant,
   * which the MCP server's authorization server takes as a JWT bearer grant (RFC 7523).
   */
  idp_token_endpoint?: string;
  idp_client_id?: string;
  idp_id_token?: string;
}

/** The URNs of the token exchange and the JWT bearer grant. */
const URN = {
  tokenExchange: "urn:ietf:params:oauth:grant-type:token-exchange",
  jwtBearer: "urn:ietf:params:oauth:grant-type:jwt-bearer",
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  idJag: "urn:ietf:params:oauth:token-type:id-jag",
} as const;

/** The JWT algorithm a private key signs with by default: its type's (and curve's) own. */
async function algorithmOf(pem: string): Promise<string> {
  const { createPrivateKey } = await import("node:crypto");
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new Error("oauth.private_key is not a PEM private key");
  }
  const type = key.asymmetricKeyType;
  if (type === "rsa") return "RS256";
  if (type === "rsa-pss") return "PS256";
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const ec: Record<string, string> = {
    prime256v1: "ES256",
    secp384r1: "ES384",
    secp521r1: "ES512",
  };
  if (type === "ec" && curve && ec[curve]) return ec[curve];
  throw new Error(
    `oauth.private_key is a ${type} key${curve ? ` (${curve})` : ""}: ` +
      "magi signs with RSA or EC P-256, P-384 or P-521 keys",
  );
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
  readonly #resource: string | undefined;
  /** `private_key_jwt`: signs the token request's client assertion (config `oauth.private_key`). */
  readonly addClientAuthentication?: AddClientAuthentication;

  /**
   * @param opts.open sends the person to the authorization URL (`magi mcp login`)
   * @param opts.redirect the loopback redirect URL of this login
   * @param opts.state gives the `state` the authorization request carries (this login's,
   *   checked by its redirect listener)
   * @param opts.client a client registered beforehand (config `oauth`): used as it is, never
   *   registered dynamically; with a secret it authenticates (the SDK picks
   *   `client_secret_basic` or `client_secret_post` from the server's metadata; with a
   *   private key, `private_key_jwt`)
   * @param opts.resource the MCP server's URL: the resource an ID-JAG is asked for when the
   *   server's metadata names none
   */
  constructor(
    private readonly server: string,
    private readonly file: string,
    opts: {
      open?: (url: URL) => void | Promise<void>;
      redirect?: string;
      state?: () => string;
      client?: PreRegistered;
      resource?: string;
    } = {},
  ) {
    this.#resource = opts.resource;
    const key = opts.client?.private_key;
    const id = opts.client?.client_id;
    if (key && id) {
      const wanted = opts.client?.signing_algorithm;
      this.addClientAuthentication = async (headers, params, url, metadata) => {
        const { createPrivateKeyJwtAuth } = await import(
          "@modelcontextprotocol/sdk/client/auth-extensions.js"
        );
        const alg = wanted ?? await algorithmOf(key);
        try {
          await createPrivateKeyJwtAuth({ issuer: id, subject: id, privateKey: key, alg })(
            headers,
            params,
            url,
            metadata,
          );
        } catch (error) {
          // jose's message names the format or algorithm, never the key.
          throw new Error(
            `Cannot sign the client assertion (${alg}) with oauth.private_key: ${
              (error as Error).message
            }`,
          );
        }
      };
    }
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
    return this.#client?.grant === "client_credentials" || this.#client?.grant === "id_jag";
  }

  /**
   * The token request of the client credentials grant, or of the JWT bearer grant with an
   * ID-JAG (`grant: "id_jag"`, fetched first from the identity provider); the SDK's default
   * (authorization code) otherwise.
   */
  prepareTokenRequest(scope?: string): URLSearchParams | Promise<URLSearchParams> | undefined {
    const grant = this.#client?.grant;
    const scoped: Record<string, string> = scope ? { scope } : {};
    if (grant === "client_credentials") {
      return new URLSearchParams({ grant_type: "client_credentials", ...scoped });
    }
    if (grant !== "id_jag") return undefined;
    return this.#identityAssertion(scope).then((assertion) =>
      new URLSearchParams({ grant_type: URN.jwtBearer, assertion, ...scoped })
    );
  }

  /**
   * Exchanges the person's ID token at the identity provider (RFC 8693) for an ID-JAG whose
   * audience is the authorization server the SDK found and whose resource is this MCP server.
   * @throws Error naming the identity provider's answer when it refuses
   */
  async #identityAssertion(scope: string | undefined): Promise<string> {
    const c = this.#client!;
    const found = this.#read().discovery;
    const audience = found?.authorizationServerMetadata?.issuer ?? found?.authorizationServerUrl;
    const resource = found?.resourceMetadata?.resource ?? this.#resource;
    if (!c.idp_token_endpoint || !c.idp_id_token || !audience || !resource) {
      throw new Error(
        "the ID-JAG grant needs oauth.idp_token_endpoint, oauth.idp_id_token and " +
          "the authorization server's metadata",
      );
    }
    const body = new URLSearchParams({
      grant_type: URN.tokenExchange,
      subject_token: c.idp_id_token,
      subject_token_type: URN.idToken,
      requested_token_type: URN.idJag,
      audience,
      resource,
      ...(c.idp_client_id ? { client_id: c.idp_client_id } : {}),
      ...(scope ? { scope } : {}),
    });
    const where = new URL(c.idp_token_endpoint).host;
    let answer: Record<string, unknown> = {};
    let status = 0;
    try {
      const response = await fetch(c.idp_token_endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body,
      });
      status = response.status;
      answer = await response.json().catch(() => ({}));
    } catch (e) {
      throw new Error(`Cannot reach the identity provider at ${where}: ${(e as Error).message}`);
    }
    const token = answer.access_token;
    if (status !== 200 || typeof token !== "string" || answer.issued_token_type !== URN.idJag) {
      const why = [answer.error, answer.error_description].filter((x) => typeof x === "string");
      throw new Error(
        `the identity provider at ${where} gave no ID-JAG (HTTP ${status}` +
          `${why.length ? `: ${why.join(": ")}` : ""})`,
      );
    }
    return token;
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.#machine) {
      return {
        client_name: "magi",
        redirect_uris: [],
        grant_types: [this.#client?.grant === "id_jag" ? URN.jwtBearer : "client_credentials"],
        token_endpoint_auth_method: this.#client?.private_key
          ? "private_key_jwt"
          : "client_secret_basic",
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
