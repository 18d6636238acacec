/**
 * The filter for `sandbox.network` as a list of domains (SPEC S8.3): an HTTP proxy outside the
 * sandbox, on a unix socket only the sandbox is given, that lets through `CONNECT host:port` and
 * plain `http://host/…` requests to the allowed names and answers 403 to anything else. Inside
 * the sandbox (no network of its own) `sandbox_bridge.js` listens on loopback and hands each
 * connection to this socket; the program gets `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`.
 *
 * @module
 */
import { join } from "node:path";
import { concatBytes } from "../core/bytes.ts";
import { privateSocketDir } from "../exec/unix_socket.ts";

/** Whether a host name is allowed: an exact name, or `*.name` for any name below it. */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
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

async function refuse(conn: Deno.Conn, status: string, why: string): Promise<void> {
  const body = `magi sandbox: ${why}\n`;
  await conn.write(enc.encode(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  )).catch(() => {});
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

async function serve(conn: Deno.Conn, allowed: readonly string[]): Promise<void> {
  const got = await readHead(conn);
  if (!got) return conn.close();
  const [line, ...headers] = got.head.split("\r\n");
  const [method, target, version] = line.split(" ");
  let to: { host: string; port: number } | undefined;
  let first: Uint8Array;
  if (method === "CONNECT") {
    to = hostPort(target ?? "", 443);
    first = got.rest;
  } else {
    let url: URL | undefined;
    try {
      url = new URL(target ?? "");
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== "http:") {
      return refuse(conn, "400 Bad Request", "only CONNECT and http:// requests pass the proxy");
    }
    to = { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) };
    // Origin form to the server; one request per connection, so the host checked is the host.
    const kept = headers.filter((h) => h && !/^(proxy-|connection:|keep-alive:)/i.test(h));
    const head = `${method} ${url.pathname}${url.search} ${version}\r\n` +
      [...kept, "Connection: close"].join("\r\n") + "\r\n\r\n";
    const bytes = enc.encode(head);
    first = concatBytes([bytes, got.rest], bytes.length + got.rest.length);
  }
  if (!to) return refuse(conn, "400 Bad Request", "a malformed host");
  if (!hostAllowed(to.host, allowed)) {
    return refuse(conn, "403 Forbidden", `${to.host} is not an allowed domain (sandbox.network)`);
  }
  let upstream: Deno.TcpConn;
  try {
    upstream = await Deno.connect({ hostname: to.host, port: to.port });
  } catch (error) {
    return refuse(conn, "502 Bad Gateway", `cannot reach ${to.host}: ${(error as Error).message}`);
  }
  if (method === "CONNECT") {
    await conn.write(enc.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
  }
  if (first.length > 0) await upstream.write(first);
  const pipe = async (from: Deno.Conn, into: Deno.Conn) => {
    try {
      await from.readable.pipeTo(into.writable, { preventClose: false });
    } catch {
      // either side went away
    }
  };
  await Promise.all([pipe(conn, upstream), pipe(upstream, conn)]);
  try {
    conn.close();
  } catch { /* closed */ }
  try {
    upstream.close();
  } catch { /* closed */ }
}
