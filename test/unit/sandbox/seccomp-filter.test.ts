import * as fs from 'node:fs';
import {
  AUDIT_ARCH,
  compileDenyFilter,
  DENIED_SYSCALLS,
  evaluateFilter,
  SECCOMP_RESULT,
  type SeccompArch,
} from '../../../src/sandbox';

describe.each<SeccompArch>(['x64', 'arm64'])('the seccomp filter for %s', (arch) => {
  const filter = compileDenyFilter(arch);
  const run = (nr: number, onArch = AUDIT_ARCH[arch]) => evaluateFilter(filter, onArch, nr);

  test('every listed call gets EPERM', () => {
    for (const [name, numbers] of Object.entries(DENIED_SYSCALLS)) {
      expect([name, run(numbers[arch])]).toEqual([name, SECCOMP_RESULT.eperm]);
    }
  });

  test('everything else is allowed', () => {
    const denied = new Set(Object.values(DENIED_SYSCALLS).map((n) => n[arch]));
    for (let nr = 0; nr < 460; nr++)
      if (!denied.has(nr)) expect([nr, run(nr)]).toEqual([nr, SECCOMP_RESULT.allow]);
  });

  test('a call made for another architecture kills the process', () => {
    const other = arch === 'x64' ? AUDIT_ARCH.arm64 : AUDIT_ARCH.x64;
    expect(run(0, other)).toBe(SECCOMP_RESULT.kill);
    expect(run(0, 0x40000003 /* i386 */)).toBe(SECCOMP_RESULT.kill);
  });

  if (arch === 'x64') {
    test('the x32 ABI is refused as a whole (its numbers carry bit 30)', () => {
      expect(run(0x40000000 + 250)).toBe(SECCOMP_RESULT.kill);
      expect(run(0x40000000 + 1)).toBe(SECCOMP_RESULT.kill);
    });
  }
});

test('the x86_64 numbers agree with the kernel headers installed here', () => {
  const header = '/usr/include/x86_64-linux-gnu/asm/unistd_64.h';
  if (!fs.existsSync(header)) return; // only the headers' absence; the escape suite checks the running kernel
  const text = fs.readFileSync(header, 'utf8');
  for (const [name, numbers] of Object.entries(DENIED_SYSCALLS)) {
    const match = new RegExp(`#define __NR_${name} (\\d+)`).exec(text);
    expect([name, match ? Number(match[1]) : 'missing']).toEqual([name, numbers.x64]);
  }
});
