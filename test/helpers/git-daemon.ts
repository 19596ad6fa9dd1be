/**
 * A `git daemon` serving one folder of bare repositories over git:// on 127.0.0.1, with pushes
 * allowed: a git store on "another machine" for the tests, started and stopped by them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { getFreePort, PortInUseError } from '../../src/temporal/dev-server';

export interface GitDaemon {
  port: number;
  /** git://127.0.0.1:<port>/<name> */
  url(name: string): string;
  stop(): Promise<void>;
}

/** Ports chosen here are chosen again this many times when taken before the daemon binds. */
const ATTEMPTS = 5;

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
  /** How ports are chosen when the caller gives none (tests force the race with it). */
  choosePort: () => Promise<number> = () => getFreePort(),
): Promise<GitDaemon> {
  if (port !== undefined) return startOn(port, args);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await choosePort(), args);
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt >= ATTEMPTS) throw err;
    }
  }
}

async function startOn(port: number, args: string[]): Promise<GitDaemon> {
  // --verbose makes the daemon say "Ready to rumble" once it listens: a port probe could not tell
  // our daemon from whatever took the port after getFreePort chose it.
  const child: ChildProcess = spawn(
    'git',
    ['daemon', '--verbose', '--listen=127.0.0.1', `--port=${port}`, ...args],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: '/nonexistent',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
      },
    },
  );
  let stderr = '';
  let closed = false;
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // After exit and the end of its stderr, so that the reason is in `stderr`.
  child.once('close', () => (closed = true));
  await waitUntilListening(
    port,
    child,
    () => stderr,
    () => closed,
  );
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

async function waitUntilListening(
  port: number,
  child: ChildProcess,
  stderr: () => string,
  closed: () => boolean,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (stderr().includes('Ready to rumble')) return;
    if (closed()) {
      const message = `git daemon on port ${port} exited: ${stderr()}`;
      throw /address already in use/i.test(stderr())
        ? new PortInUseError(message, `127.0.0.1:${port}`)
        : new Error(message);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`git daemon did not listen on ${port}: ${stderr()}`);
}
