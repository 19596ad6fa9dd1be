/**
 * The seccomp filter every sandboxed process runs under, as the classic-BPF program bubblewrap
 * installs with `--seccomp FD` just before it starts the test command.
 *
 * A deny list, not an allow list: test suites run arbitrary interpreters and native extensions,
 * and an allow list that misses one syscall breaks a user's tests in ways that are hard to trace.
 * What is denied is what a test never needs and what reaches past the sandbox's namespaces: the
 * kernel keyrings (shared with the worker's session), io_uring (its own path around seccomp and
 * frequent kernel bugs), ptrace and cross-process memory access, BPF and perf, userfaultfd (a
 * classic race amplifier), every mount-type call, namespace changes, and module and kexec loading.
 * Denied calls fail with EPERM; a call made through another ABI (x32 on x86_64, or a foreign
 * architecture) kills the process, because the numbers below would not mean the same there.
 *
 * Written by hand rather than with libseccomp: the program is a dozen lines of BPF, it must be
 * produced by the worker on any host without a native build, and the escape suite runs every
 * denied call in a real sandbox (test/sandbox/escape.test.ts), which checks the numbers below
 * against the kernel itself.
 */

export type SeccompArch = 'x64' | 'arm64';

/** Syscall numbers: x86_64 from arch/x86/entry/syscalls/syscall_64.tbl, aarch64 from asm-generic/unistd.h. */
export const DENIED_SYSCALLS: Readonly<Record<string, { x64: number; arm64: number }>> = {
  keyctl: { x64: 250, arm64: 219 },
  add_key: { x64: 248, arm64: 217 },
  request_key: { x64: 249, arm64: 218 },
  io_uring_setup: { x64: 425, arm64: 425 },
  io_uring_enter: { x64: 426, arm64: 426 },
  io_uring_register: { x64: 427, arm64: 427 },
  ptrace: { x64: 101, arm64: 117 },
  process_vm_readv: { x64: 310, arm64: 270 },
  process_vm_writev: { x64: 311, arm64: 271 },
  pidfd_getfd: { x64: 438, arm64: 438 },
  bpf: { x64: 321, arm64: 280 },
  perf_event_open: { x64: 298, arm64: 241 },
  userfaultfd: { x64: 323, arm64: 282 },
  mount: { x64: 165, arm64: 40 },
  umount2: { x64: 166, arm64: 39 },
  pivot_root: { x64: 155, arm64: 41 },
  open_tree: { x64: 428, arm64: 428 },
  move_mount: { x64: 429, arm64: 429 },
  fsopen: { x64: 430, arm64: 430 },
  fsconfig: { x64: 431, arm64: 431 },
  fsmount: { x64: 432, arm64: 432 },
  fspick: { x64: 433, arm64: 433 },
  mount_setattr: { x64: 442, arm64: 442 },
  setns: { x64: 308, arm64: 268 },
  unshare: { x64: 272, arm64: 97 },
  kexec_load: { x64: 246, arm64: 104 },
  kexec_file_load: { x64: 320, arm64: 294 },
  init_module: { x64: 175, arm64: 105 },
  finit_module: { x64: 313, arm64: 273 },
  delete_module: { x64: 176, arm64: 106 },
  open_by_handle_at: { x64: 304, arm64: 265 },
  name_to_handle_at: { x64: 303, arm64: 264 },
};

const AUDIT_ARCH: Record<SeccompArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };
/** x86_64 marks x32-ABI calls with this bit in the syscall number. */
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;
/** Offsets in struct seccomp_data. */
const DATA_NR = 0;
const DATA_ARCH = 4;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

export function seccompArchOf(nodeArch: string = process.arch): SeccompArch | null {
  return nodeArch === 'x64' || nodeArch === 'arm64' ? nodeArch : null;
}

/** The filter for `arch` as `struct sock_filter[]` in the host's byte order (both are little-endian). */
export function compileDenyFilter(arch: SeccompArch): Buffer {
  const denied = Object.values(DENIED_SYSCALLS).map((numbers) => numbers[arch]);
  const program: Instruction[] = [];
  const add = (code: number, k: number, jt = 0, jf = 0) => program.push({ code, jt, jf, k });
  // Jumps are relative; the last three instructions are: allow, deny (EPERM), kill.
  const toEnd = (fromIndex: number, target: 'allow' | 'deny' | 'kill', total: number) =>
    total - (target === 'allow' ? 3 : target === 'deny' ? 2 : 1) - (fromIndex + 1);

  const checks = denied.length + (arch === 'x64' ? 1 : 0);
  const total = 2 + 1 + checks + 3;
  add(BPF_LD_W_ABS, DATA_ARCH);
  add(BPF_JEQ_K, AUDIT_ARCH[arch], 0, toEnd(1, 'kill', total));
  add(BPF_LD_W_ABS, DATA_NR);
  if (arch === 'x64') add(BPF_JGE_K, X32_SYSCALL_BIT, toEnd(program.length, 'kill', total), 0);
  for (const nr of denied) add(BPF_JEQ_K, nr, toEnd(program.length, 'deny', total), 0);
  add(BPF_RET_K, RET_ALLOW);
  add(BPF_RET_K, RET_ERRNO | EPERM);
  add(BPF_RET_K, RET_KILL_PROCESS);
  if (program.length !== total) throw new Error(`seccomp program length ${program.length} != ${total}`);

  const out = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    if (ins.jt > 255 || ins.jf > 255) throw new Error('seccomp jump out of range');
    out.writeUInt16LE(ins.code, i * 8);
    out.writeUInt8(ins.jt, i * 8 + 2);
    out.writeUInt8(ins.jf, i * 8 + 3);
    out.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return out;
}

/** Runs the filter on one syscall, as the kernel would: for tests of the encoding. */
export function evaluateFilter(filter: Buffer, arch: number, nr: number): number {
  let pc = 0;
  let acc = 0;
  for (let steps = 0; steps < 1000; steps++) {
    const code = filter.readUInt16LE(pc * 8);
    const jt = filter.readUInt8(pc * 8 + 2);
    const jf = filter.readUInt8(pc * 8 + 3);
    const k = filter.readUInt32LE(pc * 8 + 4);
    if (code === BPF_LD_W_ABS) {
      acc = k === DATA_ARCH ? arch : k === DATA_NR ? nr : 0;
      pc++;
    } else if (code === BPF_JEQ_K) {
      pc += 1 + (acc === k ? jt : jf);
    } else if (code === BPF_JGE_K) {
      pc += 1 + (acc >>> 0 >= k ? jt : jf);
    } else if (code === BPF_RET_K) {
      return k;
    } else {
      throw new Error(`unknown BPF code ${code}`);
    }
  }
  throw new Error('filter did not return');
}

export const SECCOMP_RESULT = { allow: RET_ALLOW, eperm: RET_ERRNO | EPERM, kill: RET_KILL_PROCESS } as const;
export { AUDIT_ARCH };
