/**
 * The most a project's `.aca.json` may ask for, and what a worker allows whatever it is asked:
 * ACA_MAX_WALL_SECONDS, ACA_MAX_CPU_SECONDS and ACA_MAX_MEMORY_MIB. Memory bounds the sandbox's
 * private /tmp too (its size is the memory limit) and, doubled, the run's cgroup.
 */
export interface LimitMaximums {
  wallSeconds: number;
  cpuSeconds: number;
  memoryMiB: number;
}

export const DEFAULT_LIMIT_MAXIMUMS: Readonly<LimitMaximums> = Object.freeze({
  wallSeconds: 1800,
  cpuSeconds: 1800,
  memoryMiB: 4096,
});

/** The range each maximum may be set in: below it a suite could not run, above it means no limit. */
export const LIMIT_MAXIMUM_RANGES: Readonly<Record<keyof LimitMaximums, readonly [number, number]>> =
  Object.freeze({
    wallSeconds: [10, 24 * 3600],
    cpuSeconds: [10, 24 * 3600],
    memoryMiB: [256, 1024 * 1024],
  });
