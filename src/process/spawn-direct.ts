import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { RelayedProcess } from './relayed-process';
import type { RunRequest, RunResult, SpawnedProcess, SpawnRequest } from './spawn-types';

/** runViaHelper's work done by this process itself (for comparison). */
export function runDirect(request: RunRequest): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(request.command, request.args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: [request.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      reject(err as Error);
      return;
    }
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let overflowed = false;
    let started = false;
    const kill = (): void => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const collect = (into: Buffer[]) => (data: Buffer) => {
      if (overflowed) return;
      size += data.length;
      if (size > request.maxOutputBytes) {
        overflowed = true;
        kill();
        return;
      }
      into.push(data);
    };
    child.once('spawn', () => {
      started = true;
    });
    child.stdout!.on('data', collect(out));
    child.stderr!.on('data', collect(errs));
    if (request.input) {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(request.input);
    }
    const timer =
      request.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, request.timeoutMs)
        : null;
    child.once('error', (err) => {
      if (timer) clearTimeout(timer);
      if (!started) reject(err);
    });
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (!started) return;
      resolve({
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(errs),
        code,
        signal,
        timedOut,
        overflowed,
      });
    });
  });
}

/** The same, started by this process itself (for comparison, and where no helper is wanted). */
export function spawnDirect(request: SpawnRequest): Promise<SpawnedProcess> {
  return new Promise<SpawnedProcess>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(request.command, request.args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
    } catch (err) {
      reject(err as Error);
      return;
    }
    let started = false;
    child.once('spawn', () => {
      started = true;
      const pipes = child.stdio.slice(1) as Readable[];
      const proc = new RelayedProcess(child.pid!, () => {
        for (const pipe of pipes) pipe.destroy();
      });
      child.stdout?.on('data', (chunk: Buffer) => proc.deliver('data', chunk, 1));
      child.stderr?.on('data', (chunk: Buffer) => proc.deliver('data', chunk, 2));
      pipes[2]?.on('data', (chunk: Buffer) => proc.deliver('results', chunk));
      child.on('exit', (code, signal) => proc.deliver('exit', code, signal));
      child.on('close', () => proc.deliver('close'));
      child.on('error', (err) => proc.deliver('error', err));
      resolve(proc);
    });
    child.once('error', (err) => {
      if (!started) reject(err);
    });
  });
}
