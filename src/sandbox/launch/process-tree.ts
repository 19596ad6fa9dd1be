import * as fs from 'node:fs';
import { OutputTail } from './output-tail';
import { ResultsCollector } from '../verdicts/results-channel';
import { spawnViaHelper, type SpawnedProcess, type SpawnRequest } from '../../process';

export interface ProcessRunOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  wallTimeoutMs: number;
  outputBytes: number;
  heartbeat?: () => void;
  /** How often `heartbeat` is called; DEFAULT_HEARTBEAT_EVERY_MS unless given. */
  heartbeatEveryMs?: number;
  signal?: AbortSignal;
  /**
   * Environment tag (`NAME=value`) every process of the run inherits. Used to find
   * processes that left the process group (setsid, double fork) when there is no
   * pid namespace to tear down. Best effort: a process can scrub its environment.
   */
  sweepTag?: string;
  /**
   * Also given every chunk of output with the stream it came on, for a caller that keeps stdout
   * and stderr apart (an agent's command); `output` still gets the combined tail.
   */
  onOutput?: (chunk: Buffer, fd: 1 | 2) => void;
  /** How the process is started; by default through the worker's small spawn helper. */
  spawn?: (request: SpawnRequest) => Promise<SpawnedProcess>;
}

export interface ProcessRunResult {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  output: OutputTail;
  /** What arrived on fd 3, the results channel. */
  results: ResultsCollector;
  durationMs: number;
}

/** Temporal wants a heartbeat well inside its heartbeat timeout (20 to 30 s by default); 2 s leaves room. */
export const DEFAULT_HEARTBEAT_EVERY_MS = 2000;
/** After the main process is gone, how long stray holders of our pipes get before we stop listening. */
const PIPE_DRAIN_GRACE_MS = 1000;

/**
 * Runs one command in its own session and makes sure nothing it started is left
 * behind: on timeout, abort, or normal exit the whole process group is killed
 * (and tagged strays swept), because a test's children must not outlive the run.
 */
export async function runProcessTree(opts: ProcessRunOptions): Promise<ProcessRunResult> {
  const started = Date.now();
  const output = new OutputTail(opts.outputBytes);
  const results = new ResultsCollector();
  let timedOut = false;
  let aborted = false;
  // In a new session: the group id equals the pid, so one kill reaches every descendant that stayed.
  const child = await (opts.spawn ?? spawnViaHelper)({
    command: opts.command,
    args: opts.args,
    cwd: opts.cwd,
    env: opts.env,
  });

  return new Promise<ProcessRunResult>((resolve, reject) => {
    const killTree = (): void => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Group already gone.
      }
      if (opts.sweepTag) killTagged(opts.sweepTag);
    };

    const beat = (): void => {
      try {
        opts.heartbeat?.();
      } catch {
        // A failing heartbeat (e.g. activity context gone) must not leave the tree running.
      }
    };
    beat();
    const heartbeatTimer = setInterval(beat, opts.heartbeatEveryMs ?? DEFAULT_HEARTBEAT_EVERY_MS);
    const wallTimer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, opts.wallTimeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killTree();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();

    child.on('data', (chunk: Buffer, fd: 1 | 2) => {
      output.push(chunk);
      opts.onOutput?.(chunk, fd);
    });
    child.on('results', (chunk: Buffer) => results.push(chunk));

    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearInterval(heartbeatTimer);
      clearTimeout(wallTimer);
      clearTimeout(drainTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        exitSignal,
        timedOut,
        aborted,
        output,
        results,
        durationMs: Date.now() - started,
      });
    };

    child.on('error', (err) => {
      clearInterval(heartbeatTimer);
      clearTimeout(wallTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      killTree();
      if (!settled) {
        settled = true;
        reject(err);
      }
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // The main process is done; anything still running in its group is a leftover.
      killTree();
      // A stray that escaped the group could hold our pipes open forever; stop waiting after a grace period.
      drainTimer = setTimeout(() => {
        child.destroyPipes();
        finish();
      }, PIPE_DRAIN_GRACE_MS);
    });
    child.on('close', finish);
    child.resume();
  });
}

/** Kills every process whose environment carries `tag`, repeating while new ones keep appearing. */
export function killTagged(tag: string): void {
  const needle = Buffer.from(`\0${tag}\0`);
  for (let round = 0; round < 20; round++) {
    let found = 0;
    let entries: string[];
    try {
      entries = fs.readdirSync('/proc');
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (pid === process.pid) continue;
      let environ: Buffer;
      try {
        environ = fs.readFileSync(`/proc/${entry}/environ`);
      } catch {
        continue;
      }
      // Prefix with NUL so the tag also matches as the first variable.
      if (Buffer.concat([Buffer.from([0]), environ]).includes(needle)) {
        found++;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Exited meanwhile.
        }
      }
    }
    if (found === 0) return;
  }
}
