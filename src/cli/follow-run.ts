import type { RunHandle } from '../api/aca-client';
import type { RunResult } from '../shared/run-types';
import type { CliIO } from './cli-context';
import { stateQuery } from '../workflows/signals';
import { progressKey, progressLine } from './progress';

const POLL_MS = 500;

export type FollowOutcome = { kind: 'ended'; result: RunResult } | { kind: 'interrupted' };

/**
 * Shows a run's progress until it ends or the user presses Ctrl-C. On a terminal
 * one line is redrawn in place; elsewhere a line is printed whenever the state,
 * iteration or pass rate changes.
 */
export async function followRun(
  handle: RunHandle,
  io: CliIO,
  /** startedAt: when the run started (epoch ms), so elapsed time is the run's, not the watcher's. */
  options: { quiet?: boolean; startedAt?: number } = {},
): Promise<FollowOutcome> {
  const startedAt = options.startedAt ?? Date.now();
  let interrupted = false;
  let wake: (() => void) | null = null;
  let onInterrupt: () => void = () => undefined;
  // A query waits for a worker; with none polling it would hold Ctrl-C until it times out.
  const interruption = new Promise<null>((resolve) => (onInterrupt = () => resolve(null)));
  const onSigint = (): void => {
    interrupted = true;
    onInterrupt();
    wake?.();
  };
  process.on('SIGINT', onSigint);
  let ended: RunResult | null = null;
  let endError: unknown = null;
  const resultPromise = handle.result().then(
    (r) => {
      ended = r;
      wake?.();
    },
    (err: unknown) => {
      endError = err;
      wake?.();
    },
  );
  let lastKey = '';
  let drewLine = false;
  try {
    while (!ended && !endError && !interrupted) {
      if (!options.quiet) {
        try {
          const snapshot = await Promise.race([handle.query(stateQuery), interruption]);
          if (!snapshot) break;
          const line = progressLine(snapshot, Date.now() - startedAt);
          if (io.isTTY) {
            // Clip to the terminal width: a wrapped line could not be redrawn in place.
            const width = process.stdout.columns;
            process.stdout.write(`\r\x1b[2K${width ? line.slice(0, width - 1) : line}`);
            drewLine = true;
          } else if (progressKey(snapshot) !== lastKey) {
            lastKey = progressKey(snapshot);
            io.out(line);
          }
        } catch {
          // No worker answers queries yet; the result promise still tells when the run ends.
        }
      }
      await new Promise<void>((resolve) => {
        if (ended || endError || interrupted) return resolve();
        wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
      wake = null;
    }
  } finally {
    process.off('SIGINT', onSigint);
    if (drewLine) process.stdout.write('\n');
  }
  if (interrupted && !ended) return { kind: 'interrupted' };
  if (endError) throw endError;
  await resultPromise;
  return { kind: 'ended', result: ended as unknown as RunResult };
}
