/**
 * Credentials by the shape of their value (SPEC S2.3), for variables whose names carry no
 * credential word (`DATABASE_URL`, `GH_PAT`, `STRIPE_SK`): a URL with a password in it, a URL
 * with a token in its query or fragment (`?access_token=`, `&sig=`, `#access_token=`, in any
 * scheme: `jdbc:postgresql://…?password=`), a Discord webhook URL, a connection
 * string with a `Password=`, a known token format, a PEM private key. The token formats are data
 * (`token_formats.json`, which names its sources).
 *
 * @module
 */
import formats from "./token_formats.json" with { type: "json" };

const SHAPES: ReadonlyArray<{ id: string; pattern: RegExp }> = formats.formats.map((f) => ({
  id: f.id,
  pattern: new RegExp(f.pattern),
}));

/** A URL's scheme, also one that wraps another (`jdbc:postgresql://`, `jdbc:mysql:aws://`). */
const SCHEME = "[A-Za-z][A-Za-z0-9+.-]*(?::[A-Za-z][A-Za-z0-9+.-]*)*:\\/\\/";

/** `scheme://user:password@host…`: the password is group 1. */
const URL_WITH_PASSWORD = new RegExp(`^${SCHEME}[^\\s/?#@:]*:([^\\s/?#@]+)@[^\\s@]+$`);

/**
 * A connection string's password: `Password=` or `Pwd=` as ADO.NET, ODBC and JDBC write it
 * (`Server=db;User Id=sa;Password=…;`, `jdbc:sqlserver://db;password=…`), or libpq's
 * keyword/value form (`host=db user=app password=…`). The value is group 1 (quoted, braced
 * as ODBC writes it, or up to the next `;`), or group 2 (libpq, up to the next space).
 */
const CONNECTION_PASSWORD =
  /(?:^|;)\s*(?:password|pwd)\s*=\s*('[^']*'|"[^"]*"|\{[^}]*\}|[^;]*)|(?:^|\s)password\s*=\s*(\S+)/i;

/** Another `key=value` pair, so that a lone `password=x` is not taken for a connection string. */
const CONNECTION_PAIR = /(?:^|[;\s])[A-Za-z][A-Za-z0-9 _.-]*\s*=/g;

/**
 * A URL with a query string or a fragment (any scheme, `jdbc:…` too): the query is group 1,
 * the fragment group 2 (OAuth's implicit flow puts `#access_token=` there).
 */
const URL_QUERY = new RegExp(`^${SCHEME}[^\\s?#]+(?:\\?([^\\s#]*))?(?:#(\\S*))?$`);

/** The names of query parameters that carry a credential (`?access_token=`, `&sig=`, …). */
const CREDENTIAL_PARAM =
  /^(?:.*[_-])?(?:access[_-]?token|token|api[_-]?key|apikey|key|secret|password|passwd|pwd|sig|signature|auth|credential)$/i;

/** A Discord (or Discord-alike) webhook URL: the URL is the credential; its token is group 1. */
const DISCORD_WEBHOOK =
  /^https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api\/(?:v\d+\/)?webhooks\/\d+\/([A-Za-z0-9_-]{20,})\/?$/;

/** What {@link credentialShape} found: the format's id and the values to mask. */
export interface Shape {
  id: string;
  /** The whole value first, then parts that reveal it on their own (a URL's password). */
  values: string[];
}

/**
 * The credential shape of an environment value, if it has one.
 *
 * @example
 * ```ts
 * import { credentialShape } from "./secret_shapes.ts";
 * credentialShape("postgres://app:s3cr%40t-pw@db:5432/app");
 * // { id: "url-with-password", values: ["postgres://app:s3cr%40t-pw@db:5432/app", "s3cr%40t-pw", "s3cr@t-pw"] }
 * credentialShape("https://example.com/"); // undefined
 * ```
 */
export function credentialShape(value: string): Shape | undefined {
  const trimmed = value.trim();
  const url = URL_WITH_PASSWORD.exec(trimmed);
  if (url) {
    const values = [value, url[1]];
    try {
      const decoded = decodeURIComponent(url[1]);
      if (decoded !== url[1]) values.push(decoded);
    } catch { /* not percent-encoded after all */ }
    return { id: "url-with-password", values };
  }
  const webhook = DISCORD_WEBHOOK.exec(trimmed);
  if (webhook) return { id: "discord-webhook", values: [value, webhook[1]] };
  const query = URL_QUERY.exec(trimmed);
  if (query && (query[1] || query[2])) {
    // A fragment's pairs may follow a client-side route (`#/callback?token=…`).
    const tokens = queryCredentials(
      `${query[1] ?? ""}&${(query[2] ?? "").replace(/^[^=&]*\?/, "")}`,
    );
    if (tokens.length > 0) return { id: "url-with-token", values: [value, ...tokens] };
  }
  const connection = CONNECTION_PASSWORD.exec(trimmed);
  if (connection && (trimmed.match(CONNECTION_PAIR)?.length ?? 0) >= 2) {
    let password = (connection[1] ?? connection[2] ?? "").trim();
    if (/^(['"{]).*['"}]$/.test(password)) password = password.slice(1, -1);
    if (password !== "") return { id: "connection-string-password", values: [value, password] };
  }
  for (const { id, pattern } of SHAPES) {
    if (pattern.test(trimmed)) return { id, values: [value] };
  }
  return undefined;
}

/** The values of a query string's credential parameters, as written and decoded. */
function queryCredentials(query: string): string[] {
  const values: string[] = [];
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0 || !CREDENTIAL_PARAM.test(pair.slice(0, eq))) continue;
    const raw = pair.slice(eq + 1);
    if (raw === "") continue;
    values.push(raw);
    try {
      const decoded = decodeURIComponent(raw.replaceAll("+", " "));
      if (decoded !== raw) values.push(decoded);
    } catch { /* not percent-encoded after all */ }
  }
  return values;
}
