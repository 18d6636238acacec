// The kernel's keyrings through libc's syscall (no keyutils needed), x86-64 or AArch64:
//   keyring.ts add NAME TEXT PROGRAM ARGS...   adds a "user" key to a new session keyring,
//                                             then runs PROGRAM (which inherits the keyring)
//   keyring.ts read NAME                      prints the key's text, or "refused errno=N"
const arm = Deno.build.arch === "aarch64";
const [ADD_KEY, KEYCTL] = arm ? [217n, 219n] : [248n, 250n];
const SESSION = -3n;
const libc = Deno.dlopen("libc.so.6", {
  syscall: { parameters: ["i64", "i64", "i64", "i64", "i64", "i64"], result: "i64" },
  __errno_location: { parameters: [], result: "pointer" },
});
const errno = () => new Deno.UnsafePointerView(libc.symbols.__errno_location()!).getInt32();
const at = (b: Uint8Array) => BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
const cstr = (s: string) => new TextEncoder().encode(s + "\0");
const [op, name, text, program, ...args] = Deno.args;
const type = cstr("user");
const desc = cstr(name);
if (op === "add") {
  const value = new TextEncoder().encode(text);
  const id = libc.symbols.syscall(ADD_KEY, at(type), at(desc), at(value), BigInt(value.length), SESSION);
  if (id < 0n) {
    console.log(`add refused errno=${errno()}`);
    Deno.exit(3);
  }
  const child = await new Deno.Command(program, { args, stdin: "null" }).output();
  await Deno.stdout.write(child.stdout);
  await Deno.stderr.write(child.stderr);
} else {
  // KEYCTL_SEARCH (10) the session keyring, then KEYCTL_READ (11).
  const id = libc.symbols.syscall(KEYCTL, 10n, SESSION, at(type), at(desc), 0n);
  const buf = new Uint8Array(256);
  const n = id < 0n ? id : libc.symbols.syscall(KEYCTL, 11n, id, at(buf), 256n, 0n);
  console.log(n < 0n ? `refused errno=${errno()}` : new TextDecoder().decode(buf.subarray(0, Number(n))));
}
