/**
 * An exclusive lock for the embedded database's data folder.
 *
 * PGlite runs Postgres inside this process and keeps pages in its own memory; it takes no lock
 * of its own. Two processes that open the same folder both appear to work, and whichever closes
 * last silently overwrites the other's writes (seen in practice: 200 rows from one process gone).
 * So the first opener holds a pid lock file there and everyone else is refused until it closes.
 */
import * as path from 'node:path';
import { tryPidLock } from '../shared/pid-lock';
import { MemoryLockedError } from './memory-errors';

export const LOCK_FILE = 'aca-memory.lock';

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** Takes the folder's lock or throws MemoryLockedError naming the process that holds it. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, LOCK_FILE);
  const attempt = await tryPidLock(file);
  if (attempt.acquired) return { file, release: attempt.release };
  if (attempt.holder === process.pid) {
    throw new MemoryLockedError(
      `failure memory at ${dir} is already open in this process (pid ${process.pid})`,
      process.pid,
    );
  }
  throw new MemoryLockedError(
    `failure memory at ${dir} is in use by process ${attempt.holder} (the embedded database allows one process at a time; ` +
      'stop that process, or set DATABASE_URL to share a Postgres server between processes)',
    attempt.holder,
  );
}
