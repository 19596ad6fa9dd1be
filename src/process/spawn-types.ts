import type { EventEmitter } from 'node:events';

// What the spawn helper is asked to start or run, and what comes back (spawn-helper.ts).

export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A short command run to its end (git, a host tool): its output comes back whole. */
export interface RunRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to its stdin, which is then closed; without it stdin is /dev/null. */
  input?: Buffer;
  /** Its process group is killed after this long (0: no limit). */
  timeoutMs: number;
  /** Its process group is killed once stdout and stderr together pass this. */
  maxOutputBytes: number;
}

export interface RunResult {
  stdout: Buffer;
  stderr: Buffer;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Killed for passing maxOutputBytes; the output is what came before. */
  overflowed: boolean;
}

/**
 * A started process as the caller sees it: its pid (also its group id), output, exit.
 * Besides stdout and stderr it gets a third pipe on fd 3, the results channel: the test
 * runner's own plugin writes one line per finished test there, so what a test reported
 * leaves the sandbox as it happens and cannot be rewritten afterwards.
 */
export interface SpawnedProcess extends EventEmitter {
  readonly pid: number;
  /** Stops reading its output (strays that escaped the group may hold the pipes open). */
  destroyPipes(): void;
  /**
   * Events are held until the caller has attached its listeners and calls this: relayed
   * messages can arrive together with the one that announced the process.
   */
  resume(): void;
  /** Output of stdout (`fd` 1) or stderr (2), in the order it arrived. */
  on(event: 'data', listener: (chunk: Buffer, fd: 1 | 2) => void): this;
  on(event: 'results', listener: (chunk: Buffer) => void): this;
  on(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: 'close', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
}
