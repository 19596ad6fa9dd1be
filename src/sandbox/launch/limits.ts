/**
 * Resource limits for one test run. Every limit has a default so a caller can
 * override just the one it cares about (the escape tests tighten them all).
 */

export interface SandboxLimits {
  /** Wall-clock time after which the whole process tree is killed. */
  wallTimeoutMs: number;
  /** CPU seconds per process (RLIMIT_CPU); stops a spinning test even when wall time is generous. */
  cpuSeconds: number;
  /** Address space per process (RLIMIT_AS); also the size cap of the sandbox's private /tmp. */
  memoryBytes: number;
  /** Memory of all of a run's processes together (a cgroup per run, where one can be made). */
  runMemoryBytes: number;
  /** Processes the run may have at once (RLIMIT_NPROC inside the sandbox's own user namespace). */
  maxProcesses: number;
  /** Largest file a test may write (RLIMIT_FSIZE). */
  maxFileBytes: number;
  /** How much of the combined stdout/stderr tail is kept; the rest is counted in `cutBytes`. */
  outputBytes: number;
  /** Files (inodes) a run may add to the workspace; more is a failed attempt. */
  maxNewFiles: number;
  /** Bytes a run may add to the workspace; more is a failed attempt. */
  maxNewBytes: number;
}

import type { LimitMaximums } from '../../shared/limit-maximums';

const MiB = 1024 * 1024;

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  wallTimeoutMs: 120_000,
  cpuSeconds: 60,
  memoryBytes: 1024 * MiB,
  runMemoryBytes: 2048 * MiB,
  maxProcesses: 256,
  maxFileBytes: 64 * MiB,
  outputBytes: 64 * 1024,
  maxNewFiles: 20_000,
  maxNewBytes: 1024 * MiB,
});

/** Fills in defaults and rejects values that would silently disable a limit. */
export function resolveLimits(partial: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS };
  for (const key of Object.keys(DEFAULT_SANDBOX_LIMITS) as (keyof SandboxLimits)[]) {
    const value = partial[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`sandbox limit ${key} must be a positive finite number, got ${String(value)}`);
    }
    limits[key] = Math.floor(value);
  }
  // Memory below this cannot even start python or node; fail loudly instead of crashing oddly.
  if (limits.memoryBytes < 256 * MiB) {
    throw new Error(`sandbox limit memoryBytes must be at least 256 MiB, got ${limits.memoryBytes}`);
  }
  if (limits.maxProcesses < 8) {
    throw new Error(`sandbox limit maxProcesses must be at least 8, got ${limits.maxProcesses}`);
  }
  return limits;
}

/**
 * `limits` with the time and memory limits (aca's defaults where not given) held to `maximums`,
 * so that neither a project's request nor a default above what the worker allows gets through.
 */
export function withinMaximums(
  limits: Partial<SandboxLimits>,
  maximums: LimitMaximums,
): Partial<SandboxLimits> {
  const memoryBytes = Math.min(
    limits.memoryBytes ?? DEFAULT_SANDBOX_LIMITS.memoryBytes,
    maximums.memoryMiB * MiB,
  );
  return {
    ...limits,
    wallTimeoutMs: Math.min(
      limits.wallTimeoutMs ?? DEFAULT_SANDBOX_LIMITS.wallTimeoutMs,
      maximums.wallSeconds * 1000,
    ),
    cpuSeconds: Math.min(limits.cpuSeconds ?? DEFAULT_SANDBOX_LIMITS.cpuSeconds, maximums.cpuSeconds),
    memoryBytes,
    runMemoryBytes: Math.min(
      limits.runMemoryBytes ?? DEFAULT_SANDBOX_LIMITS.runMemoryBytes,
      Math.max(DEFAULT_SANDBOX_LIMITS.runMemoryBytes, 2 * memoryBytes),
    ),
  };
}
