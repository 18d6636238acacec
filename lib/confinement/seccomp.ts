/**
 * The sandbox's seccomp filter (SPEC S8.3): what the mount, PID and network namespaces cannot
 * take away. Today that is the kernel's key management — `keyctl`, `add_key` and
 * `request_key` — whose session and user keyrings a process inherits whatever its namespaces
 * (a Kerberos ticket, an ecryptfs or a VPN key kept there is readable by any process of the
 * same user). Each fails with `EPERM` inside the sandbox, as in Docker's default profile.
 * Unless a program may make unix sockets (`sandbox.unix_sockets`, a tools folder's program), the
 * filter also refuses making one ({@link SeccompOptions}): a socket is reached by its path
 * through any read-only mount, wherever it lies and however it was named (renamed, hard-linked
 * after bind), so the sandbox refuses the socket rather than hide each path. `EPERM`, not
 * `EAFNOSUPPORT`: a refusal, which a program reports as one ("Operation not permitted"), not a
 * system built without unix sockets.
 *
 * The filter is a classic BPF program (`struct sock_filter[]`, Linux `seccomp(2)`,
 * `SECCOMP_SET_MODE_FILTER`) that bwrap loads from a file descriptor (`--seccomp FD`). It is
 * written once per process to a private file ({@link seccompFile}) and handed to bwrap on
 * descriptor 9 ({@link withSeccomp}, through `lib/exec/fd_launch.ts`), or set by
 * `seccomp_exec.js` on the program the domain bridge starts ({@link seccompBase64}).
 *
 * Every architecture whose calls reach a Linux kernel magi runs on is matched by its audit
 * number, with its own system call numbers: x86-64 (and x32, refused whole), i386 (a 32-bit
 * program on an x86-64 kernel), AArch64 and 32-bit ARM. A call of another architecture is
 * allowed: it cannot be one of these.
 *
 * @module
 */
import { join } from "node:path";
import { withDescriptor } from "../exec/fd_launch.ts";
import { privateDir } from "../core/private.ts";

/** `BPF_LD | BPF_W | BPF_ABS`: load the 32-bit word at offset `k` of `struct seccomp_data`. */
const LOAD = 0x20;
/** `BPF_JMP | BPF_JEQ | BPF_K` and `BPF_JMP | BPF_JGE | BPF_K`. */
const JEQ = 0x15;
const JGE = 0x35;
/** `BPF_ALU | BPF_AND | BPF_K`: the loaded word AND `k`. */
const AND = 0x54;
/** `BPF_RET | BPF_K`. */
const RET = 0x06;
/**
 * Offsets in `struct seccomp_data`: the call's number, its architecture, then its arguments
 * (u64 each; the low 32 bits first on these little-endian machines — an `int` argument).
 */
const NR = 0;
const ARCH = 4;
const ARG0 = 16;
const ARG1 = 24;
const ALLOW = 0x7fff0000;
/** `SECCOMP_RET_ERRNO | EPERM`. */
const EPERM = 0x00050000 | 1;
/** x32 calls carry this bit on an x86-64 kernel. */
const X32_BIT = 0x40000000;
/** `AF_UNIX`, and `SOCK_DGRAM` in a socket type's low bits (`SOCK_TYPE_MASK` 0xf). */
const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_TYPE_MASK = 0xf;

/**
 * Per architecture (audit number, `<linux/audit.h>`): `add_key`, `request_key`, `keyctl`;
 * `socket` and `socketpair`; the calls refused whole with unix sockets (`socketcall`, which
 * takes its arguments behind a pointer a filter cannot read, and `io_uring_setup`,
 * `io_uring_enter`, `io_uring_register`, whose `IORING_OP_SOCKET` and `IORING_OP_CONNECT` make
 * and connect a socket without the `socket` call).
 */
const ARCHES: {
  arch: number;
  keys: number[];
  socket: number;
  socketpair: number;
  whole: number[];
  x32?: boolean;
}[] = [
  // x86-64
  { arch: 0xc000003e, keys: [248, 249, 250], socket: 41, socketpair: 53, whole: [], x32: true },
  // i386 (a 32-bit program on an x86-64 kernel): socketcall is 102
  { arch: 0x40000003, keys: [286, 287, 288], socket: 359, socketpair: 360, whole: [102] },
  // AArch64
  { arch: 0xc00000b7, keys: [217, 218, 219], socket: 198, socketpair: 199, whole: [] },
  // 32-bit ARM: 102 is socketcall for the old ABI (no call of the EABI's)
  { arch: 0x40000028, keys: [309, 310, 311], socket: 281, socketpair: 288, whole: [102] },
];

/** The io_uring calls, numbered alike on every architecture since Linux 5.1. */
const IO_URING = [425, 426, 427];

/** One instruction: `[code, jt, jf, k]`; `jt`/`jf` are labels until resolved. */
type Insn = [code: number, jt: string | number, jf: string | number, k: number];

/** What the filter refuses besides the keyrings. */
export interface SeccompOptions {
  /**
   * Refuse making a unix socket (`socket(AF_UNIX, …)`, `socketcall`, io_uring) and a
   * datagram pair (`socketpair(AF_UNIX, SOCK_DGRAM, …)`: `sendto` on one reaches any datagram
   * socket by its path). A stream or seqpacket pair stays (connected already, no path).
   */
  unix: boolean;
}

/**
 * The filter's bytes: `struct sock_filter` records of 8 bytes each (u16 code, u8 jt, u8 jf,
 * u32 k, in the machine's byte order — little-endian on every architecture listed).
 */
export function seccompProgram(opts: SeccompOptions = { unix: false }): Uint8Array {
  const insns: (Insn | string)[] = [[LOAD, 0, 0, ARCH]];
  for (const [i, a] of ARCHES.entries()) insns.push([JEQ, `arch${i}`, 0, a.arch]);
  insns.push([RET, 0, 0, ALLOW]);
  for (const [i, a] of ARCHES.entries()) {
    insns.push(`arch${i}`, [LOAD, 0, 0, NR]);
    if (a.x32) insns.push([JGE, "deny", 0, X32_BIT]);
    for (const call of a.keys) insns.push([JEQ, "deny", 0, call]);
    if (opts.unix) {
      for (const call of [...a.whole, ...IO_URING]) insns.push([JEQ, "deny", 0, call]);
      insns.push([JEQ, "socket", 0, a.socket], [JEQ, "pair", 0, a.socketpair]);
    }
    insns.push([RET, 0, 0, ALLOW]);
  }
  if (opts.unix) {
    // socket(domain, …): refused for AF_UNIX.
    insns.push("socket", [LOAD, 0, 0, ARG0], [JEQ, "deny", 0, AF_UNIX], [RET, 0, 0, ALLOW]);
    // socketpair(domain, type, …): refused for AF_UNIX datagrams.
    insns.push("pair", [LOAD, 0, 0, ARG0], [JEQ, 0, "allow", AF_UNIX], [LOAD, 0, 0, ARG1]);
    insns.push([AND, 0, 0, SOCK_TYPE_MASK], [JEQ, "deny", "allow", SOCK_DGRAM]);
    insns.push("allow", [RET, 0, 0, ALLOW]);
  }
  insns.push("deny", [RET, 0, 0, EPERM]);
  // Resolve labels: a jump's offset counts the instructions after the jump.
  const at = new Map<string, number>();
  const code: Insn[] = [];
  for (const x of insns) typeof x === "string" ? at.set(x, code.length) : code.push(x);
  const out = new DataView(new ArrayBuffer(code.length * 8));
  code.forEach(([op, jt, jf, k], n) => {
    const rel = (j: string | number) => {
      if (typeof j === "number") return j;
      const off = at.get(j)! - n - 1;
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${j} out of range`);
      return off;
    };
    out.setUint16(n * 8, op, true);
    out.setUint8(n * 8 + 2, rel(jt));
    out.setUint8(n * 8 + 3, rel(jf));
    out.setUint32(n * 8 + 4, k, true);
  });
  return new Uint8Array(out.buffer);
}

const written = new Map<string, string>();

/**
 * The filter as a file in `dir` (`filterDir`: in magi's state folder, which no sandbox sees
 * and no file builtin may write), written once per process and kind.
 *
 * @throws Deno.errors.* when the file cannot be written
 */
export function seccompFile(dir: string, opts: SeccompOptions = { unix: false }): string {
  const name = opts.unix ? "seccomp-unix.bpf" : "seccomp.bpf";
  const path = join(dir, name);
  const had = written.get(path);
  // Written already, unless removed since (one `lstat`: a HOME that went away, a cleaned state).
  if (had && exists(had)) return had;
  privateDir(dir);
  // Shared by this user's magi processes: written whole under another name, then renamed.
  const part = `${path}.${Deno.pid}`;
  Deno.writeFileSync(part, seccompProgram(opts), { mode: 0o600 });
  Deno.renameSync(part, path);
  written.set(path, path);
  return path;
}

/**
 * bwrap's command with the filter: `/bin/sh` opens the file as descriptor 9 and runs bwrap
 * with `--seccomp 9` before its other arguments (bwrap reads the descriptor and closes it).
 */
export function withSeccomp(
  command: { program: string; args: string[] },
  file: string,
): { program: string; args: string[] } {
  return withDescriptor(
    { program: command.program, args: ["--seccomp", "9", ...command.args] },
    9,
    file,
  );
}

const encoded = new Map<boolean, string>();

/** The filter's bytes in base64, as `seccomp_exec.js` takes them (made once per kind). */
export function seccompBase64(opts: SeccompOptions = { unix: false }): string {
  let text = encoded.get(opts.unix);
  if (text === undefined) {
    let raw = "";
    for (const b of seccompProgram(opts)) raw += String.fromCharCode(b);
    encoded.set(opts.unix, text = btoa(raw));
  }
  return text;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
