/**
 * withFileLock: holders of one lock file take turns, in one process as across processes; a wait
 * is bounded; a lock that cannot be taken runs nothing.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileLockError, FileLockTimeoutError, withFileLock } from '../../../src/shared/file-lock';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-file-lock-');

test('holders of one lock file never overlap, however many ask at once', async () => {
  const lockFile = path.join(tempDir(), 'lock');
  let inside = 0;
  let most = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      withFileLock(
        lockFile,
        async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 30));
          order.push(i);
          inside--;
        },
        60_000,
      ),
    ),
  );
  expect(most).toBe(1);
  expect(order.sort()).toEqual([0, 1, 2, 3, 4, 5]);
  // The file stays, for the next taker to lock the same file.
  expect(fs.existsSync(lockFile)).toBe(true);
});

test('a lock another process holds past the wait is a FileLockTimeoutError, and nothing runs', async () => {
  const lockFile = path.join(tempDir(), 'lock');
  // A process group of its own: the lock is held by sleep, flock's child, which must end too.
  const holder = spawn('flock', [lockFile, 'sh', '-c', 'echo held; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const ended = new Promise((resolve) => holder.once('exit', resolve));
  try {
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    let ran = false;
    const err = await withFileLock(
      lockFile,
      async () => {
        ran = true;
      },
      500,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileLockTimeoutError);
    expect(err).toMatchObject({ lockFile, waitedMs: 500 });
    expect(ran).toBe(false);
  } finally {
    process.kill(-holder.pid!, 'SIGKILL');
    await ended;
  }
  // Its holder gone, the lock is free at once.
  await expect(withFileLock(lockFile, async () => 'ran', 60_000)).resolves.toBe('ran');
});

test('a lock file that cannot be made is a FileLockError naming it, and nothing runs', async () => {
  const lockFile = path.join(tempDir(), 'no-such-folder', 'lock');
  let ran = false;
  const err = await withFileLock(
    lockFile,
    async () => {
      ran = true;
    },
    1_000,
  ).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FileLockError);
  expect((err as FileLockError).message).toContain(lockFile);
  expect(ran).toBe(false);
});

test("the work's own failure comes back as it was, and the lock is free after it", async () => {
  const lockFile = path.join(tempDir(), 'lock');
  const failure = new Error('the change failed');
  await expect(withFileLock(lockFile, () => Promise.reject(failure), 60_000)).rejects.toBe(failure);
  await expect(withFileLock(lockFile, async () => 'next', 1_000)).resolves.toBe('next');
});
