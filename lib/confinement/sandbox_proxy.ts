/**
 * The filter for `sandbox.network` as a list of domains (SPEC S8.3): an HTTP proxy outside the
 * sandbox, on a unix socket only the sandbox is given, that lets through `CONNECT host:port` and
 * plain `http://host/…` requests to the allowed names and answers 403 to anything else. Inside
 * the sandbox (no network of its own) `sandbox_bridge.js` listens on loopback and hands each
 * connection to this socket; the program gets `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`.
 *
 * Only ports 80 and 443 pass unless an entry names its port (`"localhost:8080"`). A plain
 * request's `Host` header must name what its request line names (else 400): the proxy checks
 * the request line's host, so a different `Host` would reach another virtual host behind an
 * allowed name's address. One request per connection: the server gets its head (with the
 * proxy's own `Host`) and the body its `Content-Length` gives, nothing after (a pipelined
 * second request is dropped); a chunked body is refused (411).
 *
 * @module
 */
import { join } from "node:path";
import { concatBytes } from "../core/bytes.ts";
import { privateSocketDir } from "../exec/unix_socket.ts";

/** The ports an entry that names none allows: HTTP and HTTPS. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/**
 * Whether `host` at `port` is allowed: an entry is an exact name, or `*.name` for any name
 * below it, with `:port` for that port only (without one, {@link DEFAULT_PORTS}).
 *
 * @param port the port asked for (default 443)
 */
export function hostAllowed(host: string, allowed: readonly string[], port = 443): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((entry) => {
    const m = /^(.*?)(?::(\d+))?$/s.exec(entry.toLowerCase())!;
    const ports = m[2] === undefined ? DEFAULT_PORTS : [Number(m[2])];
    if (!ports.includes(port)) return false;
    const p = m[1];
    return p.startsWith("*.") ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

/** A running proxy. */
export interface DomainProxy {
  /** The unix socket's path (in a fresh 0700 folder). */
  socket: string;
  close(): void;
}

const running = new Map<string, DomainProxy>();

/**
 * The proxy for one list of allowed domains, started on first use and kept for the process
 * (it does not keep magi alive).
 */
export function domainProxy(allowed: readonly string[]): DomainProxy {
  const key = [...allowed].sort().join(",");
  let proxy = running.get(key);
  if (!proxy) {
    proxy = startProxy(allowed);
    running.set(key, proxy);
  }
  return proxy;
}

const HEAD_LIMIT = 64 * 1024;
const enc = new TextEncoder();

function startProxy(allowed: readonly string[]): DomainProxy {
  const dir = privateSocketDir("magi-proxy-");
  const socket = join(dir, "proxy.sock");
  const listener = Deno.listen({ transport: "unix", path: socket });
  listener.unref();
  (async () => {
    try {
      for await (const conn of listener) serve(conn, allowed).catch(() => conn.close());
    } catch {
      // closed
    }
  })();
  return {
    socket,
    close() {
      listener.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

/** Reads up to the end of the request head; returns the head and what came after it. */
async function readHead(conn: Deno.Conn): Promise<{ head: string; rest: Uint8Array } | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buf = new Uint8Array(8192);
  while (size < HEAD_LIMIT) {
    const n = await conn.read(buf);
    if (n === null) return null;
    chunks.push(buf.slice(0, n));
    size += n;
    const all = concatBytes(chunks, size);
    const text = new TextDecoder("latin1").decode(all);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) return { head: text.slice(0, end + 4), rest: all.slice(end + 4) };
  }
  return null;
}

/** Writes all of `bytes` (a socket may take fewer at a time). */
async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

async function refuse(conn: Deno.Conn, status: string, why: string): Promise<void> {
  const body = enc.encode(`magi sandbox: ${why}\n`);
  const head = enc.encode(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
  );
  await writeAll(conn, concatBytes([head, body], head.length + body.length)).catch(() => {});
  conn.close();
}

/** Splits "host:port" (a bracketed IPv6 host too); undefined when malformed. */
function hostPort(text: string, port: number): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:\s/]+)(?::(\d{1,5}))?$/i.exec(text);
  if (!m) return undefined;
  const p = m[2] ? Number(m[2]) : port;
  if (!(p > 0 && p < 65536)) return undefined;
  return { host: m[1].replace(/^\[|\]$/g, ""), port: p };
}

/** A host and port as compared: lower case, no trailing dot, no brackets. */
function sameHost(a: { host: string; port: number }, b: { host: string; port: number }): boolean {
  const norm = (h: string) => h.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return norm(a.host) === norm(b.host) && a.port === b.port;
}

/** What a plain `http://` request sends on: its head, and how many body bytes follow. */
interface PlainRequest {
  to: { host: string; port: number };
  head: string;
  /** The body's length (`Content-Length`; 0 without one). */
  body: number;
}

/**
 * Checks a plain request against its own request line and rebuilds its head in origin form.
 *
 * @returns the request, or the status and reason to refuse it with
 */
function plainRequest(
  method: string,
  target: string,
  version: string,
  headers: string[],
): PlainRequest | { status: string; why: string } {
  let url: URL | undefined;
  try {
    url = new URL(target);
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== "http:") {
    return { status: "400 Bad Request", why: "only CONNECT and http:// requests pass the proxy" };
  }
  // Written on as they came: nothing in them may end a line.
  if (!/^[A-Z]{1,20}$/.test(method) || !/^HTTP\/1\.[01]$/.test(version)) {
    return { status: "400 Bad Request", why: "a malformed request line" };
  }
  const to = { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) };
  const fields: [name: string, value: string, line: string][] = [];
  for (const h of headers.filter((h) => h !== "")) {
    // A name with spaces, or a folded line, could read as another header to the server.
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):([^\r\n]*)$/.exec(h);
    if (!m) return { status: "400 Bad Request", why: "a malformed header line" };
    fields.push([m[1].toLowerCase(), m[2].trim(), h]);
  }
  const named = (name: string) => fields.filter(([n]) => n === name).map(([, v]) => v);
  const hosts = named("host");
  if (hosts.length > 1) return { status: "400 Bad Request", why: "more than one Host header" };
  if (hosts.length === 1) {
    const said = hostPort(hosts[0], 80);
    if (!said || !sameHost(said, to)) {
      return {
        status: "400 Bad Request",
        why: `the Host header names ${JSON.stringify(hosts[0])}, the request line ${url.host}`,
      };
    }
  }
  if (named("transfer-encoding").length > 0) {
    return {
      status: "411 Length Required",
      why: "a chunked body is not passed on plain http (give Content-Length, or use https)",
    };
  }
  const lengths = [...new Set(named("content-length"))];
  if (lengths.length > 1 || (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0]))) {
    return { status: "400 Bad Request", why: "a malformed Content-Length" };
  }
  // Origin form to the server, with the host checked as its Host.
  const dropped = /^(proxy-.*|connection|keep-alive|host|te|upgrade)$/;
  const kept = fields.filter(([name]) => !dropped.test(name)).map(([, , line]) => line);
  const head = `${method} ${url.pathname}${url.search} ${version}\r\n` +
    [`Host: ${url.host}`, ...kept, "Connection: close"].join("\r\n") + "\r\n\r\n";
  return { to, head, body: lengths.length === 1 ? Number(lengths[0]) : 0 };
}

async function serve(conn: Deno.Conn, allowed: readonly string[]): Promise<void> {
  const got = await readHead(conn);
  if (!got) return conn.close();
  const [line, ...headers] = got.head.split("\r\n");
  const [method, target, version] = line.split(" ");
  let to: { host: string; port: number } | undefined;
  let first: Uint8Array;
  // How many more bytes of the client's pass on (a plain request's body); all for a tunnel.
  let more = Infinity;
  if (method === "CONNECT") {
    to = hostPort(target ?? "", 443);
    first = got.rest;
  } else {
    const plain = plainRequest(method ?? "", target ?? "", version ?? "", headers);
    if ("why" in plain) return refuse(conn, plain.status, plain.why);
    to = plain.to;
    const bytes = enc.encode(plain.head);
    const body = got.rest.subarray(0, plain.body);
    first = concatBytes([bytes, body], bytes.length + body.length);
    more = plain.body - body.length;
  }
  if (!to) return refuse(conn, "400 Bad Request", "a malformed host");
  if (!hostAllowed(to.host, allowed, to.port)) {
    const listed = hostAllowed(to.host, allowed.map((e) => e.replace(/:\d+$/, "")), 443) ||
      hostAllowed(to.host, allowed.map((e) => e.replace(/:\d+$/, "")), 80);
    return refuse(
      conn,
      "403 Forbidden",
      listed
        ? `port ${to.port} of ${to.host} is not allowed (sandbox.network allows 80 and 443 ` +
          `unless an entry names its port: "${to.host}:${to.port}")`
        : `${to.host} is not an allowed domain (sandbox.network)`,
    );
  }
  let upstream: Deno.TcpConn;
  try {
    upstream = await Deno.connect({ hostname: to.host, port: to.port });
  } catch (error) {
    return refuse(conn, "502 Bad Gateway", `cannot reach ${to.host}: ${(error as Error).message}`);
  }
  if (method === "CONNECT") {
    await writeAll(conn, enc.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
  }
  if (first.length > 0) await writeAll(upstream, first);
  const pipe = async (from: Deno.Conn, into: Deno.Conn) => {
    try {
      await from.readable.pipeTo(into.writable, { preventClose: false });
    } catch {
      // either side went away
    }
  };
  // The rest of a plain request's body, and nothing after it.
  const body = async () => {
    const buf = new Uint8Array(64 * 1024);
    try {
      while (more > 0) {
        const n = await conn.read(buf.subarray(0, Math.min(buf.length, more)));
        if (n === null) break;
        await writeAll(upstream, buf.subarray(0, n));
        more -= n;
      }
    } catch {
      // either side went away
    }
  };
  await Promise.all([more === Infinity ? pipe(conn, upstream) : body(), pipe(upstream, conn)]);
  try {
    conn.close();
  } catch { /* closed */ }
  try {
    upstream.close();
  } catch { /* closed */ }
}
