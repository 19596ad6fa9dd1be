import type { SandboxLimits } from './limits';

/**
 * Wraps a command so it starts under the run's rlimits. bash's ulimit is used
 * because it exists everywhere python and node do and costs ~1 ms; the limits
 * are set by the first process *inside* the sandbox, which matters for
 * RLIMIT_NPROC: there it counts only processes of the sandbox's own user
 * namespace, while set outside it would count every process of the host uid.
 *
 * Each ulimit may only fail when the host already imposes a stricter hard
 * limit, which is fine to keep, so failures are ignored one by one.
 */
export function withRlimits(
  argv: string[],
  limits: SandboxLimits,
  opts: {
    limitProcesses: boolean;
    addressSpaceHeadroomBytes: number;
    /**
     * Whether the run's memory is bounded by its cgroup. Then no address-space limit is set: it
     * counts reserved, not used, memory, and breaks ordinary programs (each thread's stack and
     * malloc arena reserve tens of MiB: "can't start new thread" long before memory runs out).
     * Without a cgroup it is the only bound there is.
     */
    memoryInCgroup?: boolean;
  },
): string[] {
  const kib = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
  const settings: [string, number][] = [
    ['-c', 0], // no core dumps of a 1 GiB test into the workspace
    ['-t', limits.cpuSeconds],
    ...(opts.memoryInCgroup
      ? []
      : ([['-v', kib(limits.memoryBytes + opts.addressSpaceHeadroomBytes)]] as [string, number][])),
    ['-f', kib(limits.maxFileBytes)], // bash counts -f in 1024-byte blocks
  ];
  if (opts.limitProcesses) settings.push(['-u', limits.maxProcesses]);
  const script =
    settings.map(([flag, value]) => `ulimit ${flag} ${value} 2>/dev/null;`).join(' ') + ' exec "$@"';
  return ['/bin/bash', '-c', script, 'aca-limits', ...argv];
}
