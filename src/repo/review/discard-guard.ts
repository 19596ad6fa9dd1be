import * as fs from 'node:fs';
import * as path from 'node:path';
import { safeKey } from '../../shared/safe-key';
import { git } from '../git/git';
import { applyMessage } from './apply-run';

/**
 * Whether `aca apply` ever brought a run's changes into its repository: the commit it makes
 * says so in its message, on whatever branch the user has since moved it to.
 */
export async function wasApplied(commonDir: string, runId: string, branch: string | null): Promise<boolean> {
  const mark = applyMessage('', runId, branch).split('\n')[2]!;
  const found = await git({ gitDir: commonDir }, [
    'log',
    '--all',
    '--fixed-strings',
    `--grep=${mark}`,
    '--format=%H',
    '-n',
    '1',
  ]).catch(() => '');
  return found.trim() !== '';
}

/**
 * Runs this home discarded. Temporal cannot change what a closed workflow records, so the mark
 * is a file of the home that discarded the run (each holds when and the run's id).
 */
function marksDir(home: string): string {
  return path.join(home, 'discarded');
}

export function markDiscarded(home: string, runId: string, at = new Date()): void {
  fs.mkdirSync(marksDir(home), { recursive: true });
  fs.writeFileSync(
    path.join(marksDir(home), safeKey(runId)),
    `${JSON.stringify({ runId, at: at.toISOString() })}\n`,
  );
}

/** Clears a run's mark: a new run under the same id (`--replace`) is not discarded. */
export function clearDiscarded(home: string, runId: string): void {
  fs.rmSync(path.join(marksDir(home), safeKey(runId)), { force: true });
}

/** When the run was discarded from this home, or null. */
export function discardedAt(home: string, runId: string): string | null {
  try {
    const mark = JSON.parse(fs.readFileSync(path.join(marksDir(home), safeKey(runId)), 'utf8')) as {
      runId?: unknown;
      at?: unknown;
    };
    return mark.runId === runId && typeof mark.at === 'string' ? mark.at : null;
  } catch {
    return null;
  }
}
