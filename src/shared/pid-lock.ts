/**
 * An exclusive lock file holding its owner's pid. Creating the file with 'wx' is the atomic
 * test-and-set; a file left by a process that died (its pid no longer runs, or it is an earlier
 * life of this pid, as containers reuse pid 1) is taken over. Files held by this process are
 * remembered, so a second taker inside the same process is refused too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export type LockAttempt = { acquired: true; release(): void } | { acquired: false; holder: number };

const heldHere = new Set<string>();

interface LockContent {
  pid: number;
  startedAt: string;
}

export async function tryPidLock(lockFile: string): Promise<LockAttempt> {
  const file = path.resolve(lockFile);
  if (heldHere.has(file)) return { acquired: false, holder: process.pid };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const content: LockContent = { pid: process.pid, startedAt: new Date().toISOString() };
      fs.writeFileSync(file, JSON.stringify(content), { flag: 'wx' });
      heldHere.add(file);
      return { acquired: true, release: () => release(file) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readHolderPatiently(file);
    if (holder !== null && holder !== process.pid && isProcessAlive(holder))
      return { acquired: false, holder };
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

/** Whether a process with this pid runs (EPERM: it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(file: string): void {
  if (!heldHere.delete(file)) return;
  if (readHolder(file) === process.pid) fs.rmSync(file, { force: true });
}
