import type { SandboxLimits } from '../launch/limits';

/** See `addressSpaceHeadroomBytes` in runner.ts: what V8 reserves beyond the heap it uses. */
export const NODE_ADDRESS_SPACE_HEADROOM = 1024 * 1024 * 1024;

/**
 * WebAssembly memories normally reserve ~10 GiB of address space each (guard regions for V8's
 * trap handler), which RLIMIT_AS refuses: vitest's module lexer, for one, then fails with "Out
 * of memory: Cannot allocate Wasm memory". Without the trap handler V8 checks bounds in code.
 */
const WASM_FLAG = '--disable-wasm-trap-handler';

/**
 * The V8 heap limit for a run's node processes: most of memoryBytes, so that an oversized heap
 * ends in node's own "heap out of memory" rather than a failed allocation somewhere in V8.
 */
export function nodeHeapFlag(limits: SandboxLimits): string {
  const heapMiB = Math.max(128, Math.floor((limits.memoryBytes / 1024 / 1024) * 0.75));
  return `--max-old-space-size=${heapMiB}`;
}

/**
 * Environment every runner that may start node adds to the base one. NODE_OPTIONS reaches every
 * node process of the run (vitest's workers, node --test's children, what npm starts), and each
 * of them is under the run's RLIMIT_AS.
 */
export function nodeRunEnv(limits: SandboxLimits): Record<string, string> {
  const options = [nodeHeapFlag(limits)];
  // Node before 20.15 does not know the flag (and would refuse to start with it).
  if (process.allowedNodeEnvironmentFlags.has(WASM_FLAG)) options.push(WASM_FLAG);
  return {
    NODE_OPTIONS: options.join(' '),
    // Two malloc arenas instead of one per thread: each reserves 128 MiB of address space.
    MALLOC_ARENA_MAX: '2',
  };
}
