// The sandbox's side of `sandbox.network` as a list of domains (see sandbox_proxy.ts): started
// inside the sandbox, which has no network of its own, as
//   deno run -A sandbox_bridge.js SOCKET FILTER -- PROGRAM ARGS...
// It listens on 127.0.0.1 (the sandbox's own loopback), hands every connection to the proxy's
// unix SOCKET, runs PROGRAM with HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing at it, and
// exits with PROGRAM's status. FILTER is a seccomp filter (base64, see seccomp.ts) PROGRAM runs
// under, started through seccomp_exec.js: the bridge makes unix sockets, the program may not
// ("-": none). The bridge makes itself non-dumpable first, so the program cannot trace it
// (ptrace, /proc/PID/mem, pidfd_getfd) to make a socket through it. Plain JavaScript: nothing
// to type-check or fetch at start.
const [socket, filter, dashes, program, ...args] = Deno.args;
if (!socket || !filter || dashes !== "--" || !program) {
  console.error("usage: sandbox_bridge.js SOCKET FILTER -- PROGRAM [ARGS...]");
  Deno.exit(2);
}
{
  const PR_SET_DUMPABLE = 4;
  const libc = Deno.dlopen("libc.so.6", {
    prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  });
  if (libc.symbols.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n) !== 0) {
    console.error("sandbox_bridge.js: cannot make itself non-dumpable");
    Deno.exit(126);
  }
  libc.close();
}
const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const url = `http://127.0.0.1:${listener.addr.port}`;
(async () => {
  for await (const conn of listener) {
    (async () => {
      let up;
      try {
        up = await Deno.connect({ transport: "unix", path: socket });
        await Promise.all([
          conn.readable.pipeTo(up.writable).catch(() => {}),
          up.readable.pipeTo(conn.writable).catch(() => {}),
        ]);
      } catch {
        // the proxy or the client went away
      } finally {
        try {
          conn.close();
        } catch { /* closed */ }
        try {
          up?.close();
        } catch { /* closed */ }
      }
    })();
  }
})();
const env = {
  HTTP_PROXY: url,
  HTTPS_PROXY: url,
  ALL_PROXY: url,
  http_proxy: url,
  https_proxy: url,
  all_proxy: url,
  NO_PROXY: "",
  no_proxy: "",
};
const exec = new URL("./seccomp_exec.js", import.meta.url).pathname;
const [started, startArgs] = filter === "-" ? [program, args] : [
  Deno.execPath(),
  ["run", "-A", "--no-config", "--no-lock", "--quiet", exec, filter, "--", program, ...args],
];
let status;
try {
  status = await new Deno.Command(started, {
    args: startArgs,
    env,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  })
    .spawn().status;
} catch (error) {
  console.error(`${program}: ${error.message}`);
  Deno.exit(127);
}
Deno.exit(
  status.signal ? 128 + (Deno.build.os === "linux" ? signalNumber(status.signal) : 1) : status.code,
);

function signalNumber(name) {
  return {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGKILL: 9,
    SIGSEGV: 11,
    SIGPIPE: 13,
    SIGTERM: 15,
  }[name] ?? 1;
}
