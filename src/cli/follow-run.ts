import type { RunHandle } from '../api/aca-client';
import type { RunResult } from '../shared/run-types';
import type { CliIO } from './cli-context';
import { stateQuery } from '../workflows/signals';
import { progressKey, progressLine } from './progress';
import { missingWorker } from '../temporal/task-queue-pollers';

const POLL_MS = 500;
const WORKER_RECHECK_MS = 3_000;

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
  // A query waits for a worker; with none polling it would hold Ctrl-C until it times out, and
  // its retries would outlive the connection: Ctrl-C aborts it.
  const abort = new AbortController();
  const onSigint = (): void => {
    interrupted = true;
    abort.abort();
    wake?.();
  };
  process.on('SIGINT', onSigint);
  let ended: RunResult | null = null;
  let endError: unknown = null;
  // The result is a long poll: Ctrl-C ends it too, or the process would wait for it to time out.
  const resultPromise = handle.client
    .withAbortSignal(abort.signal, () => handle.result())
    .then(
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
  // A query no worker answers is retried by the client for seconds, past a Ctrl-C: ask only
  // while one polls, and look again for one every few seconds.
  const { taskQueue } = await handle.describe();
  let workerCheckedAt = 0;
  let workerPolls = false;
  try {
    while (!ended && !endError && !interrupted) {
      if (!workerPolls && Date.now() - workerCheckedAt >= WORKER_RECHECK_MS) {
        workerCheckedAt = Date.now();
        workerPolls = (await missingWorker(handle.client, taskQueue)) === null;
      }
      if (!options.quiet && workerPolls) {
        try {
          const snapshot = await handle.client.withAbortSignal(abort.signal, () => handle.query(stateQuery));
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
          // The worker went away, or is slow: look for one again before the next query.
          workerPolls = false;
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
