// Starting a program under a seccomp filter (see seccomp.ts), inside the sandbox:
//   deno run -A seccomp_exec.js FILTER -- PROGRAM ARGS...
// FILTER is the filter's bytes in base64 (`struct sock_filter` records). Through libc
// (Deno's FFI): `prctl(PR_SET_NO_NEW_PRIVS)`, `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` on
// this thread, then `execvp` — PROGRAM replaces this process (other threads end), keeping the
// filter, its environment and its descriptors. Used by `sandbox_bridge.js`, which itself
// must make unix sockets (to reach the domain proxy) and so runs without the filter's unix
// refusal. Status 127 with one line when PROGRAM cannot be started; 126 when the filter
// cannot be set (the program never runs unfiltered). Plain JavaScript: nothing to type-check.
const [filter, dashes, program, ...args] = Deno.args;
if (!filter || dashes !== "--" || !program) {
  console.error("usage: seccomp_exec.js FILTER -- PROGRAM [ARGS...]");
  Deno.exit(2);
}
const PR_SET_SECCOMP = 22;
const PR_SET_NO_NEW_PRIVS = 38;
const SECCOMP_MODE_FILTER = 2;
const libc = Deno.dlopen("libc.so.6", {
  prctl: { parameters: ["i32", "u64", "pointer", "u64", "u64"], result: "i32" },
  execvp: { parameters: ["buffer", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
});
const errno = () => new Deno.UnsafePointerView(libc.symbols.__errno_location()).getInt32();
const bytes = Uint8Array.from(atob(filter), (c) => c.charCodeAt(0));
if (bytes.length === 0 || bytes.length % 8 !== 0) {
  console.error("seccomp_exec.js: the filter is not whole sock_filter records");
  Deno.exit(126);
}
// struct sock_fprog { unsigned short len; struct sock_filter *filter; } on a 64-bit machine.
const prog = new Uint8Array(16);
const view = new DataView(prog.buffer);
view.setUint16(0, bytes.length / 8, true);
view.setBigUint64(8, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes))), true);
if (libc.symbols.prctl(PR_SET_NO_NEW_PRIVS, 1n, null, 0n, 0n) !== 0) {
  console.error(`seccomp_exec.js: no_new_privs refused (errno ${errno()})`);
  Deno.exit(126);
}
if (
  libc.symbols.prctl(
    PR_SET_SECCOMP,
    BigInt(SECCOMP_MODE_FILTER),
    Deno.UnsafePointer.of(prog),
    0n,
    0n,
  ) !== 0
) {
  console.error(`seccomp_exec.js: the seccomp filter was refused (errno ${errno()})`);
  Deno.exit(126);
}
const cstr = (s) => new TextEncoder().encode(s + "\0");
const strings = [program, ...args].map(cstr);
const argv = new BigUint64Array(strings.length + 1);
strings.forEach((s, i) => argv[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(s))));
libc.symbols.execvp(strings[0], new Uint8Array(argv.buffer));
const code = errno();
console.error(`${program}: ${code === 2 ? "command not found" : `cannot start (errno ${code})`}`);
Deno.exit(code === 2 ? 127 : 126);
