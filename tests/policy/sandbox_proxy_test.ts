/**
 * The `sandbox.network` domain proxy over its real unix socket, to a real HTTP server on
 * loopback: a plain request's Host header must be the request line's host, one request per
 * connection reaches the server, and only ports 80 and 443 pass unless an entry names one.
 */
import assert from "node:assert/strict";
import { domainProxy, hostAllowed } from "../../lib/confinement/sandbox_proxy.ts";
import { sandboxSettings } from "../../lib/config/sandbox_settings.ts";

/**
 * Sends `request` to the proxy's socket and returns what it answers: all of it (the proxy
 * closes after one request), or up to `until` (a tunnel stays open). At most 10 s.
 */
async function ask(socket: string, request: string, until?: RegExp): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const close = () => {
    try {
      conn.close();
    } catch { /* closed */ }
  };
  const timer = setTimeout(close, 10_000);
  const bytes = new TextEncoder().encode(request);
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  let text = "";
  const decoder = new TextDecoder();
  const buf = new Uint8Array(8192);
  while (!until?.test(text)) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    text += decoder.decode(buf.subarray(0, n), { stream: true });
  }
  clearTimeout(timer);
  close();
  return text;
}

Deno.test({
  name: "sandbox proxy: a Host header other than the request line's is refused; one request " +
    "per connection; ports 80 and 443 unless an entry names one",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const limit = setTimeout(() => {
      throw new Error("the proxy test took over 60 s");
    }, 60_000);
    const seen: string[] = [];
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (req) => {
        const body = await req.text();
        const line = `host=${req.headers.get("host")} path=${new URL(req.url).pathname}` +
          (body ? ` body=${body}` : "");
        seen.push(line);
        return new Response(`${line}\n`);
      },
    );
    const port = server.addr.port;
    const at = `localhost:${port}`;
    const named = domainProxy(["localhost:" + port]).socket;

    // The request line's host, and a Host header that agrees, reach the server.
    const ok = await ask(named, `GET http://${at}/a HTTP/1.1\r\nHost: ${at}\r\n\r\n`);
    assert.match(ok, /^HTTP\/1\.1 200/);
    assert.match(ok, new RegExp(`host=${at} path=/a`));
    // Without a Host header the proxy sends the checked one.
    const bare = await ask(named, `GET http://${at}/b HTTP/1.1\r\nUser-Agent: t\r\n\r\n`);
    assert.match(bare, new RegExp(`host=${at} path=/b`));
    // Domain fronting: another virtual host behind an allowed name's address.
    const fronted = await ask(
      named,
      `GET http://${at}/c HTTP/1.1\r\nHost: other.internal\r\n\r\n`,
    );
    assert.match(fronted, /^HTTP\/1\.1 400/);
    assert.match(fronted, /the Host header names "other\.internal", the request line localhost:/);
    const twice = await ask(
      named,
      `GET http://${at}/d HTTP/1.1\r\nHost: ${at}\r\nHost: other.internal\r\n\r\n`,
    );
    assert.match(twice, /^HTTP\/1\.1 400.*\r\n[^]*more than one Host header/);
    // A header line that a server could read as two, and a folded line, are refused.
    const folded = await ask(
      named,
      `GET http://${at}/e HTTP/1.1\r\nX-A: 1\nHost: other.internal\r\n\r\n`,
    );
    assert.match(folded, /^HTTP\/1\.1 400/);
    const spaced = await ask(
      named,
      `GET http://${at}/e HTTP/1.1\r\nHost : other.internal\r\n\r\n`,
    );
    assert.match(spaced, /^HTTP\/1\.1 400/);
    // A pipelined second request with another Host never reaches the server.
    const piped = await ask(
      named,
      `POST http://${at}/f HTTP/1.1\r\nHost: ${at}\r\nContent-Length: 5\r\n\r\nhello` +
        `GET /g HTTP/1.1\r\nHost: other.internal\r\n\r\n`,
    );
    assert.match(piped, /host=localhost:\d+ path=\/f body=hello/);
    const chunked = await ask(
      named,
      `POST http://${at}/h HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    );
    assert.match(chunked, /^HTTP\/1\.1 411/);
    assert.deepEqual(seen, [
      `host=${at} path=/a`,
      `host=${at} path=/b`,
      `host=${at} path=/f body=hello`,
    ]);

    // The name without a port: only 80 and 443, for plain requests and tunnels.
    const plain = domainProxy(["localhost"]).socket;
    const other = await ask(plain, `GET http://${at}/i HTTP/1.1\r\nHost: ${at}\r\n\r\n`);
    assert.match(other, /^HTTP\/1\.1 403/);
    assert.match(other, new RegExp(`port ${port} of localhost is not allowed`));
    const ssh = await ask(plain, "CONNECT localhost:22 HTTP/1.1\r\nHost: localhost:22\r\n\r\n");
    assert.match(ssh, /^HTTP\/1\.1 403[^]*port 22 of localhost is not allowed/);
    const tunnel = await ask(
      named,
      `CONNECT ${at} HTTP/1.1\r\nHost: ${at}\r\n\r\n`,
      /\r\n\r\n/,
    );
    assert.match(tunnel, /^HTTP\/1\.1 200 Connection Established/);
    assert.equal(seen.length, 3);

    assert.ok(hostAllowed("registry.npmjs.org", ["*.npmjs.org"], 443));
    assert.ok(hostAllowed("registry.npmjs.org", ["*.npmjs.org"], 80));
    assert.ok(!hostAllowed("registry.npmjs.org", ["*.npmjs.org"], 8080));
    assert.ok(hostAllowed("registry.npmjs.org", ["*.npmjs.org:8080"], 8080));
    assert.ok(!hostAllowed("registry.npmjs.org", ["*.npmjs.org:8080"], 443));
    assert.deepEqual(sandboxSettings({ sandbox: { network: ["localhost:8080"] } }).network, [
      "localhost:8080",
    ]);
    assert.throws(
      () => sandboxSettings({ sandbox: { network: ["localhost:"] } }),
      /"localhost:8080"/,
    );
    clearTimeout(limit);
  },
});
