/**
 * Credentials by the shape of their value (SPEC S2.3), for variables whose names carry no
 * credential word (`DATABASE_URL`, `GH_PAT`, `STRIPE_SK`): a URL with a password in it, a
 * known token format, a PEM private key. The token formats are data
 * (`token_formats.json`, which names its sources).
 *
 * @module
 */
import formats from "./token_formats.json" with { type: "json" };

const SHAPES: ReadonlyArray<{ id: string; pattern: RegExp }> = formats.formats.map((f) => ({
  id: f.id,
  pattern: new RegExp(f.pattern),
}));

/** `scheme://user:password@host…`: the password is group 1. */
const URL_WITH_PASSWORD = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:([^\s/?#@]+)@[^\s@]+$/;

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
  for (const { id, pattern } of SHAPES) {
    if (pattern.test(trimmed)) return { id, values: [value] };
  }
  return undefined;
}
