/**
 * An exclusive lock file for the embedded database's data folder.
 *
 * PGlite runs Postgres inside this process and keeps pages in its own memory; it takes no lock
 * of its own. Two processes that open the same folder both appear to work, and whichever closes
 * last silently overwrites the other's writes (seen in practice: 200 rows from one process gone).
 * So the first opener writes its pid here and everyone else is refused until it closes. A lock
 * left behind by a process that died is taken over (its pid no longer runs).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryLockedError } from './memory-errors';

export const LOCK_FILE = 'aca-memory.lock';

/** Folders this process holds, so a second open inside the same process is refused too. */
const heldHere = new Set<string>();

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

interface LockContent {
  pid: number;
  startedAt: string;
}

/** Takes the folder's lock or throws MemoryLockedError naming the process that holds it. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, LOCK_FILE);
  if (heldHere.has(dir)) {
    throw new MemoryLockedError(
      `failure memory at ${dir} is already open in this process (pid ${process.pid})`,
      process.pid,
    );
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // 'wx' fails when the file exists: creation is the atomic test-and-set.
      fs.writeFileSync(
        file,
        JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() } satisfies LockContent),
        {
          flag: 'wx',
        },
      );
      heldHere.add(dir);
      return { file, release: () => release(dir, file) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readHolderPatiently(file);
    if (holder !== null && holder !== process.pid && isAlive(holder)) {
      throw new MemoryLockedError(
        `failure memory at ${dir} is in use by process ${holder} (the embedded database allows one process at a time; ` +
          'stop that process, or set DATABASE_URL to share a Postgres server between processes)',
        holder,
      );
    }
    // Stale: the holder died, or it is an earlier life of this pid (containers reuse pid 1).
    fs.rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}

/** The pid in the lock file, or null if the file is gone or unreadable (a half-written lock). */
export function readHolder(file: string): number | null {
  try {
    const content = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockContent>;
    return typeof content.pid === 'number' ? content.pid : null;
  } catch {
    return null;
  }
}

/**
 * An empty lock file may be one another process created a moment ago and is still writing
 * (create and write are two steps); give it a moment before calling it stale.
 */
async function readHolderPatiently(file: string): Promise<number | null> {
  for (let i = 0; i < 20; i++) {
    const holder = readHolder(file);
    if (holder !== null || !fs.existsSync(file)) return holder;
    await sleep(50);
  }
  return null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else; still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(dir: string, file: string): void {
  if (!heldHere.delete(dir)) return;
  if (readHolder(file) === process.pid) fs.rmSync(file, { force: true });
}
