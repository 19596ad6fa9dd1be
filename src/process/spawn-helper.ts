/**
 * Starts test processes from a small helper process instead of from the worker itself.
 *
 * Node starts a child by forking the calling process, and the fork copies the caller's page
 * tables while its event loop stands still: about 5 ms for a bare Node, 15 ms for a worker with
 * the embedded database loaded, over 70 ms for a worker busy with 50 runs, on the thread that
 * also runs activities and talks to Temporal. The helper stays small (one Node with nothing
 * loaded), so its forks stay cheap and never stop the worker.
 *
 * The helper only spawns and relays: process groups, timeouts, kills and output bounds stay
 * with the caller (the sandbox's launch/process-tree.ts), which can signal the child's group directly because the
 * helper and the worker share one pid namespace. When the worker goes away, the helper kills
 * the groups it started and exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { RelayedProcess } from './relayed-process';
import type { RunRequest, RunResult, SpawnedProcess, SpawnRequest } from './spawn-types';

// Plain JavaScript beside this module (copied into dist/ by the build), so it runs the same from
// dist/ and from the sources under Jest or tsx.
const HELPER_PATH = path.join(__dirname, 'spawn-helper-process.cjs');

type HelperMessage =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'data' | 'results'; id: number; data: Buffer | Uint8Array; fd?: 2 }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: 'close'; id: number }
  | {
      type: 'ran';
      id: number;
      stdout: Buffer | Uint8Array;
      stderr: Buffer | Uint8Array;
      code: number | null;
      signal: NodeJS.Signals | null;
      timedOut: boolean;
      overflowed: boolean;
    }
  | { type: 'error' | 'failed'; id: number; message: string; code?: string };

interface Pending {
  resolve: (p: SpawnedProcess) => void;
  reject: (err: Error) => void;
  process: RelayedProcess | null;
}

function spawnError(message: string, code: string | undefined): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}

/** One helper per worker process, started on first use (or early, with `startSpawnHelper`). */
export class SpawnHelper {
  private helper: ChildProcess | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly runs = new Map<
    number,
    { resolve: (r: RunResult) => void; reject: (err: Error) => void }
  >();

  /** `onStart` runs with the pid of each helper process started, before it is asked for anything. */
  constructor(private readonly onStart?: (pid: number) => void) {}

  start(): ChildProcess {
    if (this.helper && this.helper.connected) return this.helper;
    const helper = spawn(process.execPath, [HELPER_PATH], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      // Nothing of the worker's environment (secrets included) is needed to start a process:
      // each request carries the environment its process gets.
      env: {},
    });
    helper.on('message', (msg: HelperMessage) => this.onMessage(msg));
    helper.on('exit', () => {
      if (this.helper === helper) this.helper = null;
      for (const [id, entry] of this.pending) {
        this.pending.delete(id);
        const err = new Error('the process helper exited');
        if (entry.process) entry.process.deliver('error', err);
        else entry.reject(err);
      }
      for (const [id, entry] of this.runs) {
        this.runs.delete(id);
        entry.reject(Object.assign(new Error('the process helper exited'), { code: 'ACA_HELPER_EXITED' }));
      }
    });
    helper.on('error', () => undefined);
    if (helper.pid !== undefined) this.onStart?.(helper.pid);
    this.helper = helper;
    this.idle();
    return helper;
  }

  spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const helper = this.start();
    const id = this.nextId++;
    return new Promise<SpawnedProcess>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, process: null });
      // Keep this process alive while a child runs; let it exit when none does.
      helper.ref();
      (helper.channel as { ref?: () => void } | undefined)?.ref?.();
      helper.send({ type: 'spawn', id, ...request });
    });
  }

  /**
   * Runs a command to its end. A helper that dies meanwhile rejects the call (its command may
   * or may not have run, so it is not repeated); the next call starts a new helper.
   */
  run(request: RunRequest): Promise<RunResult> {
    const helper = this.start();
    const id = this.nextId++;
    return new Promise<RunResult>((resolve, reject) => {
      this.runs.set(id, { resolve, reject });
      helper.ref();
      (helper.channel as { ref?: () => void } | undefined)?.ref?.();
      try {
        helper.send({ type: 'run', id, ...request });
      } catch (err) {
        this.runs.delete(id);
        reject(err as Error);
        this.idle();
      }
    });
  }

  /** The helper's pid while one runs. */
  pid(): number | undefined {
    return this.helper?.connected ? this.helper.pid : undefined;
  }

  private idle(): void {
    if (this.pending.size > 0 || this.runs.size > 0 || !this.helper) return;
    this.helper.unref();
    (this.helper.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private onMessage(msg: HelperMessage): void {
    const ran = this.runs.get(msg.id);
    if (ran) {
      if (msg.type !== 'ran' && msg.type !== 'error') return;
      this.runs.delete(msg.id);
      if (msg.type === 'ran') {
        ran.resolve({
          stdout: Buffer.from(msg.stdout),
          stderr: Buffer.from(msg.stderr),
          code: msg.code,
          signal: msg.signal,
          timedOut: msg.timedOut,
          overflowed: msg.overflowed,
        });
      } else {
        ran.reject(spawnError(msg.message, msg.code));
      }
      this.idle();
      return;
    }
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    switch (msg.type) {
      case 'spawned': {
        const proc = new RelayedProcess(msg.pid, () =>
          this.helper?.send({ type: 'destroy-pipes', id: msg.id }),
        );
        entry.process = proc;
        entry.resolve(proc);
        break;
      }
      case 'data':
        entry.process?.deliver('data', Buffer.from(msg.data), msg.fd ?? 1);
        break;
      case 'results':
        entry.process?.deliver('results', Buffer.from(msg.data));
        break;
      case 'exit':
        entry.process?.deliver('exit', msg.code, msg.signal);
        break;
      case 'close':
        this.pending.delete(msg.id);
        entry.process?.deliver('close');
        this.idle();
        break;
      case 'error':
      case 'failed': {
        const err = spawnError(msg.message, msg.code);
        if (entry.process) {
          entry.process.deliver('error', err);
        } else {
          this.pending.delete(msg.id);
          entry.reject(err);
          this.idle();
        }
        break;
      }
    }
  }
}

const shared = new SpawnHelper();

/**
 * Starts the helper now. A worker calls this before it loads anything large, so even the one
 * fork that starts the helper is cheap.
 */
export function startSpawnHelper(): void {
  shared.start();
}

/** Starts `command` in a new session (its pid is its process group id) through the helper. */
export function spawnViaHelper(request: SpawnRequest): Promise<SpawnedProcess> {
  return shared.spawn(request);
}

/**
 * Runs a short command to its end through the helper: what the worker runs many times a step
 * (git) pays for a fork of the small helper, not of the worker.
 */
export function runViaHelper(request: RunRequest): Promise<RunResult> {
  return shared.run(request);
}

/** The pid of the worker's helper while one runs. */
export function sharedHelperPid(): number | undefined {
  return shared.pid();
}
