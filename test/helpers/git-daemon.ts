/**
 * A `git daemon` serving one folder of bare repositories over git:// on 127.0.0.1, with pushes
 * allowed: a git store on "another machine" for the tests, started and stopped by them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { getFreePort } from '../../src/temporal/dev-server';

export interface GitDaemon {
  port: number;
  /** git://127.0.0.1:<port>/<name> */
  url(name: string): string;
  stop(): Promise<void>;
}

/**
 * `args` replace the daemon's options (but where it listens) and folders; by default every
 * repository under `basePath` is served. git daemon takes options only before the first folder.
 */
export async function startGitDaemon(
  basePath: string,
  args: string[] = [
    '--reuseaddr',
    '--export-all',
    `--base-path=${basePath}`,
    '--enable=receive-pack',
    basePath,
  ],
  /** A port of the caller's: a daemon started again where the workers expect it. */
  port?: number,
): Promise<GitDaemon> {
  port ??= await getFreePort();
  const child: ChildProcess = spawn('git', ['daemon', '--listen=127.0.0.1', `--port=${port}`, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: '/nonexistent',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await waitForPort(port, child, () => stderr);
  return {
    port,
    url: (name) => `git://127.0.0.1:${port}/${name}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`git daemon exited: ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`git daemon did not listen on ${port}: ${stderr()}`);
}
