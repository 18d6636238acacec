/**
 * The bearer token of `magi mcp --http`: without it any local process could run tools as the
 * person. It lives in a private file (0600 in a 0700 folder), by default
 * `$XDG_STATE_HOME/magi/mcp-token`; when the file is missing a token is generated (32 random
 * bytes, base64url) and created there atomically. Requests are checked by
 * {@link bearerMatches} in constant time.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import { createPrivateFile } from "../core/private.ts";

/** The name the token is masked as in magi's output (`$MAGI_MCP_TOKEN`). */
export const TOKEN_SECRET_NAME = "MAGI_MCP_TOKEN";

/** A token file's content: one token68 value (RFC 7235), at least 16 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9\-._~+/]{16,1024}=*$/;

/** The token in use and where it is kept. */
export interface McpToken {
  token: string;
  /** The token file (absolute or as given). */
  path: string;
  /** Whether this start generated it (then it is shown once). */
  generated: boolean;
}

/** A fresh token: 32 random bytes as base64url (43 characters). */
export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

function readToken(path: string): string {
  const info = Deno.statSync(path);
  if (!info.isFile) throw new Error(`Cannot use token file "${path}": not a regular file`);
  const mode = (info.mode ?? 0) & 0o777;
  if (mode & 0o077) {
    throw new Error(
      `Cannot use token file "${path}": its mode is 0${
        mode.toString(8)
      }, so others may read it; run chmod 600 "${path}"`,
    );
  }
  const token = Deno.readTextFileSync(path).trim();
  if (!TOKEN_SHAPE.test(token)) {
    throw new Error(
      `Cannot use token file "${path}": expected one token of at least 16 characters ` +
        "(letters, digits, -._~+/)",
    );
  }
  return token;
}

/**
 * The token in `path`, generated and stored there (0600) when the file is missing.
 *
 * @param ownFolder whether `path`'s folder is magi's own (made, and set to 0700); false for
 *   `--token-file`, whose folder is the person's and is left as it is
 * @throws Error when the file exists but is not private or holds no token, or cannot be made
 */
export function loadOrCreateToken(path: string, ownFolder = true): McpToken {
  try {
    return { token: readToken(path), path, generated: false };
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const token = newToken();
  try {
    createPrivateFile(path, token + "\n", ownFolder);
  } catch (error) {
    // Another magi made it first: use its token.
    if (error instanceof Deno.errors.AlreadyExists) {
      return { token: readToken(path), path, generated: false };
    }
    throw new Error(`Cannot create token file "${path}": ${(error as Error).message}`);
  }
  return { token, path, generated: true };
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Whether an `Authorization` header value carries `Bearer <token>` (the scheme in any case).
 * Compares digests in constant time, so the time taken tells nothing about the token.
 */
export function bearerMatches(header: string | null, token: string): boolean {
  const m = header?.match(/^\s*Bearer\s+(\S+)\s*$/i);
  const given = m ? m[1] : "";
  const equal = timingSafeEqual(digest(given), digest(token));
  return m !== null && m !== undefined && equal;
}
