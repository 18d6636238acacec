/**
 * The sandbox's seccomp filter (SPEC S8.3): what the mount, PID and network namespaces cannot
 * take away. Today that is the kernel's key management — `keyctl`, `add_key` and
 * `request_key` — whose session and user keyrings a process inherits whatever its namespaces
 * (a Kerberos ticket, an ecryptfs or a VPN key kept there is readable by any process of the
 * same user). Each fails with `EPERM` inside the sandbox, as in Docker's default profile.
 *
 * The filter is a classic BPF program (`struct sock_filter[]`, Linux `seccomp(2)`,
 * `SECCOMP_SET_MODE_FILTER`) that bwrap loads from a file descriptor (`--seccomp FD`). It is
 * written once per process to a private file ({@link seccompFile}) and handed to bwrap on
 * descriptor 9 ({@link withSeccomp}, through `lib/exec/fd_launch.ts`).
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

/** `BPF_LD | BPF_W | BPF_ABS`: load the 32-bit word at offset `k` of `struct seccomp_data`. */
const LOAD = 0x20;
/** `BPF_JMP | BPF_JEQ | BPF_K` and `BPF_JMP | BPF_JGE | BPF_K`. */
const JEQ = 0x15;
const JGE = 0x35;
/** `BPF_RET | BPF_K`. */
const RET = 0x06;
/** Offsets in `struct seccomp_data`: the call's number, then its architecture. */
const NR = 0;
const ARCH = 4;
const ALLOW = 0x7fff0000;
/** `SECCOMP_RET_ERRNO | EPERM`. */
const EPERM = 0x00050000 | 1;
/** x32 calls carry this bit on an x86-64 kernel. */
const X32_BIT = 0x40000000;

/** Audit architecture numbers (`<linux/audit.h>`) and their `add_key`, `request_key`, `keyctl`. */
const ARCHES: { arch: number; calls: number[]; x32?: boolean }[] = [
  { arch: 0xc000003e, calls: [248, 249, 250], x32: true }, // x86-64
  { arch: 0x40000003, calls: [286, 287, 288] }, // i386
  { arch: 0xc00000b7, calls: [217, 218, 219] }, // AArch64
  { arch: 0x40000028, calls: [309, 310, 311] }, // ARM
];

/** One instruction: `[code, jt, jf, k]`; `jt`/`jf` are labels until resolved. */
type Insn = [code: number, jt: string | number, jf: string | number, k: number];

/**
 * The filter's bytes: `struct sock_filter` records of 8 bytes each (u16 code, u8 jt, u8 jf,
 * u32 k, in the machine's byte order — little-endian on every architecture listed).
 */
export function seccompProgram(): Uint8Array {
  const insns: (Insn | string)[] = [[LOAD, 0, 0, ARCH]];
  for (const [i, a] of ARCHES.entries()) insns.push([JEQ, `arch${i}`, 0, a.arch]);
  insns.push([RET, 0, 0, ALLOW]);
  for (const [i, a] of ARCHES.entries()) {
    insns.push(`arch${i}`, [LOAD, 0, 0, NR]);
    if (a.x32) insns.push([JGE, "deny", 0, X32_BIT]);
    for (const call of a.calls) insns.push([JEQ, "deny", 0, call]);
    insns.push([RET, 0, 0, ALLOW]);
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

let written: string | undefined;

/**
 * The filter as a file in `dir` (magi's private scratch folder), written once per process.
 *
 * @throws Deno.errors.* when the file cannot be written
 */
export function seccompFile(dir: string): string {
  if (written) return written;
  const path = join(dir, "seccomp.bpf");
  Deno.writeFileSync(path, seccompProgram(), { mode: 0o600 });
  return written = path;
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
