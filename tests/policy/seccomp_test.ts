/**
 * The seccomp filter's decisions on every architecture it matches, run by a small classic-BPF
 * interpreter over `struct seccomp_data` (the architectures other than this machine's cannot
 * run here): keyrings refused always; unix sockets, `socketcall`, io_uring and a datagram
 * `socketpair` refused only with `unix`; everything else allowed. The real filter on this
 * machine is tested through bwrap (`sandbox_unix_test.ts`, `sandbox_launcher_test.ts`).
 */
import assert from "node:assert/strict";
import { seccompBase64, seccompProgram } from "../../lib/confinement/seccomp.ts";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;

/** Runs the filter on one call: its architecture, number and first two arguments. */
function decide(prog: Uint8Array, arch: number, nr: number, args: number[] = []): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, nr, true);
  data.setUint32(4, arch, true);
  args.forEach((a, i) => data.setBigUint64(16 + 8 * i, BigInt(a), true));
  const code = new DataView(prog.buffer, prog.byteOffset, prog.byteLength);
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8;) {
    const op = code.getUint16(pc * 8, true);
    const jt = code.getUint8(pc * 8 + 2);
    const jf = code.getUint8(pc * 8 + 3);
    const k = code.getUint32(pc * 8 + 4, true);
    pc++;
    if (op === 0x20) acc = data.getUint32(k, true);
    else if (op === 0x54) acc = (acc & k) >>> 0;
    else if (op === 0x15) pc += acc === k ? jt : jf;
    else if (op === 0x35) pc += acc >= k ? jt : jf;
    else if (op === 0x06) return k;
    else throw new Error(`opcode ${op.toString(16)}`);
  }
  throw new Error("fell off the end");
}

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;
const AF_UNIX = 1;
const AF_INET = 2;
const STREAM = 1;
const DGRAM = 2;
const SEQPACKET = 5;
const CLOEXEC = 0o2000000;

/** Per architecture: keyctl, socket, socketpair, socketcall (if any), and an ordinary call. */
const CALLS = [
  { arch: X86_64, keyctl: 250, socket: 41, socketpair: 53, socketcall: undefined, read: 0 },
  { arch: I386, keyctl: 288, socket: 359, socketpair: 360, socketcall: 102, read: 3 },
  { arch: AARCH64, keyctl: 219, socket: 198, socketpair: 199, socketcall: undefined, read: 63 },
  { arch: ARM, keyctl: 311, socket: 281, socketpair: 288, socketcall: 102, read: 3 },
];

Deno.test("seccomp: the keyrings always, unix sockets only with unix, on every architecture", () => {
  const keys = seccompProgram();
  const unix = seccompProgram({ unix: true });
  for (const c of CALLS) {
    const at = `arch ${c.arch.toString(16)}`;
    for (const prog of [keys, unix]) {
      assert.equal(decide(prog, c.arch, c.keyctl), EPERM, at);
      assert.equal(decide(prog, c.arch, c.read), ALLOW, at);
      assert.equal(decide(prog, c.arch, c.socket, [AF_INET, STREAM]), ALLOW, at);
    }
    // Without `unix`: unix sockets as before.
    assert.equal(decide(keys, c.arch, c.socket, [AF_UNIX, STREAM]), ALLOW, at);
    assert.equal(decide(keys, c.arch, c.socketpair, [AF_UNIX, DGRAM]), ALLOW, at);
    assert.equal(decide(keys, c.arch, 425), ALLOW, at);
    // With it: no unix socket, whatever the type and flags; high bits of the int ignored.
    for (const type of [STREAM, DGRAM, SEQPACKET, STREAM | CLOEXEC]) {
      assert.equal(decide(unix, c.arch, c.socket, [AF_UNIX, type]), EPERM, at);
    }
    assert.equal(decide(unix, c.arch, c.socket, [2 ** 32 + AF_UNIX, STREAM]), EPERM, at);
    // A connected pair stays, but a datagram one (its sendto reaches any path) does not.
    assert.equal(decide(unix, c.arch, c.socketpair, [AF_UNIX, STREAM]), ALLOW, at);
    assert.equal(decide(unix, c.arch, c.socketpair, [AF_UNIX, SEQPACKET | CLOEXEC]), ALLOW, at);
    assert.equal(decide(unix, c.arch, c.socketpair, [AF_UNIX, DGRAM]), EPERM, at);
    assert.equal(decide(unix, c.arch, c.socketpair, [AF_UNIX, DGRAM | CLOEXEC]), EPERM, at);
    for (const nr of [425, 426, 427]) assert.equal(decide(unix, c.arch, nr), EPERM, at);
    if (c.socketcall !== undefined) {
      // socketcall(SYS_SOCKET, args): the arguments lie behind a pointer; refused whole.
      assert.equal(decide(unix, c.arch, c.socketcall, [1, 0]), EPERM, at);
      assert.equal(decide(keys, c.arch, c.socketcall, [1, 0]), ALLOW, at);
    }
  }
  // x32 refused whole; another architecture's calls allowed (they are none of these).
  assert.equal(decide(unix, X86_64, 0x40000000 + 41, [AF_INET]), EPERM);
  assert.equal(decide(unix, 0x80000016, 41, [AF_UNIX]), ALLOW);
});

Deno.test("seccomp: the base64 form is the program's bytes", () => {
  const bytes = Uint8Array.from(atob(seccompBase64({ unix: true })), (c) => c.charCodeAt(0));
  assert.deepEqual(bytes, seccompProgram({ unix: true }));
});
