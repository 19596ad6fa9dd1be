import * as fs from 'node:fs';
import * as path from 'node:path';

/** Fails instead of hanging the suite: a git call blocked on a FIFO never returns by itself. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens each FIFO's writing end once, so a git process blocked reading it (before a fix) ends. */
export function unblockFifos(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFIFO()) continue;
    try {
      fs.closeSync(
        fs.openSync(path.join(entry.parentPath, entry.name), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK),
      );
    } catch {
      // No reader: nothing blocked on it.
    }
  }
}
