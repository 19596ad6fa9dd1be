/**
 * An exclusive lock shared by every process on the machine that takes the same file: flock(2),
 * held by a small process of its own (util-linux's `flock` running `cat`) while the caller works,
 * since Node has no flock. The kernel drops the lock when its holder ends, however it ends, so a
 * worker killed while holding it leaves nothing stale: no pid to check for life (which another
 * pid namespace would get wrong), no file to break (which two breakers can race on). The holder
 * ends when its stdin closes: when the caller is done, or when the caller dies.
 *
 * The lock file stays: removing it would let a late taker lock a file nobody else opens again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { SystemError } from './errors';
import { findExecutable, HOST_TOOL_ENV } from './executables';

/** The lock could not be taken at all (flock missing, the file cannot be made). */
export class FileLockError extends SystemError {
  constructor(
    readonly lockFile: string,
    readonly detail: string,
  ) {
    super(`cannot take the lock ${lockFile}: ${detail}`);
  }
}

/** Another process held the lock for the whole wait. */
export class FileLockTimeoutError extends SystemError {
  constructor(
    readonly lockFile: string,
    readonly waitedMs: number,
  ) {
    super(`another process held the lock ${lockFile} for ${Math.round(waitedMs / 1000)} s; gave up waiting`);
  }
}

/** flock's exit code when its wait ran out, out of the range the held command could give. */
const WAIT_RAN_OUT = 75;

/** Runs `work` holding the lock on `lockFile` (made if absent), waiting at most `timeoutMs` for it. */
export async function withFileLock<T>(
  lockFile: string,
  work: () => Promise<T>,
  timeoutMs: number,
): Promise<T> {
  const holder = await takeLock(lockFile, timeoutMs);
  try {
    return await work();
  } finally {
    await releaseLock(holder);
  }
}

function takeLock(lockFile: string, timeoutMs: number): Promise<ChildProcess> {
  const flock = findExecutable('flock', HOST_TOOL_ENV.PATH);
  if (!flock) {
    return Promise.reject(new FileLockError(lockFile, 'flock is not installed (apt-get install util-linux)'));
  }
  const child = spawn(
    flock,
    [
      '--exclusive',
      '--wait',
      String(timeoutMs / 1000),
      '--conflict-exit-code',
      String(WAIT_RAN_OUT),
      lockFile,
      '/bin/sh',
      '-c',
      // The lock's file descriptor goes on to cat, which holds it until its stdin ends.
      'echo held && exec cat >/dev/null',
    ],
    { cwd: '/', env: HOST_TOOL_ENV, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // Writing nothing, the only error is a holder already gone: its exit says why.
  child.stdin!.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    let said = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('held')) resolve(child);
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (err) => reject(new FileLockError(lockFile, err.message)));
    child.once('exit', (code, signal) => {
      if (code === WAIT_RAN_OUT) reject(new FileLockTimeoutError(lockFile, timeoutMs));
      else reject(new FileLockError(lockFile, `flock ended (${code ?? signal}): ${stderr.trim()}`));
    });
  });
}

async function releaseLock(holder: ChildProcess): Promise<void> {
  if (holder.exitCode !== null || holder.signalCode !== null) return;
  const ended = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  holder.stdin!.end();
  await ended;
}
