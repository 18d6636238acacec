/**
 * What every request to `magi mcp --http` must show before the MCP transport sees it: a
 * loopback `Host` and, when a browser sends one, a loopback `Origin` (DNS-rebinding
 * protection, MCP transports §Security), then `Authorization: Bearer <token>` unless serving
 * with `--no-auth`.
 *
 * @module
 */
import { bearerMatches } from "./token.ts";

/** What a request is checked against. */
export interface Guard {
  /** `host:port` values accepted in `Host`. */
  allowedHosts: readonly string[];
  /** Origins accepted in `Origin` (absent is accepted: not a browser). */
  allowedOrigins: readonly string[];
  /** The bearer token; undefined serves without one (`--no-auth`). */
  token: string | undefined;
}

function refuse(status: number, code: number, message: string, headers = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, {
    status,
    headers,
  });
}

/** The response refusing `request`, or undefined when it may go on. */
export function refusal(request: Request, guard: Guard): Response | undefined {
  const host = request.headers.get("host");
  if (!host || !guard.allowedHosts.includes(host.toLowerCase())) {
    return refuse(403, -32000, `Invalid Host "${host ?? ""}": magi serves MCP on loopback only`);
  }
  const origin = request.headers.get("origin");
  if (origin !== null && !guard.allowedOrigins.includes(origin.toLowerCase())) {
    return refuse(
      403,
      -32000,
      `Invalid Origin "${origin}": magi serves MCP to loopback origins only`,
    );
  }
  if (guard.token === undefined) return undefined;
  const header = request.headers.get("authorization");
  if (bearerMatches(header, guard.token)) return undefined;
  return refuse(
    401,
    -32000,
    header === null
      ? 'Unauthorized: send "Authorization: Bearer <token>" (magi mcp --http printed where the token is kept)'
      : "Unauthorized: the bearer token is wrong",
    {
      "www-authenticate": header === null
        ? 'Bearer realm="magi"'
        : 'Bearer realm="magi", error="invalid_token"',
    },
  );
}
