import type { RunHandle } from '../api/aca-client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { RunResult, RunSnapshot } from '../shared/run-types';
import { printableLine } from '../shared/terminal-text';
import type { CliIO } from './cli-context';
import { stateQuery } from '../workflows/signals';
import { progressKey, progressLine } from './progress';
import { missingWorker } from '../temporal/task-queue-pollers';
import { currentStep, pendingStep, stepLine, waitingDecisionLine, type StepLine } from './run-step';
import { StepSummaries } from './step-summaries';
import { readRunResult } from '../shared/run-failure';

const POLL_MS = 500;
const WORKER_RECHECK_MS = 3_000;
/** How long the live view waits for the worker's answer to the state query. */
const QUERY_WITHIN_MS = 3_000;
/** Looks at the run that may fail in a row before the server is taken as gone. */
const MAX_FAILED_LOOKS = 10;

export type FollowOutcome = { kind: 'ended'; result: RunResult } | { kind: 'interrupted' };

/**
 * Shows a run's progress until it ends or the user presses Ctrl-C: where it is (state,
 * iteration, pass rate) and the step it is on (an agent's model step, a tool call and its target,
 * a test run), with the step's retries and last error, or that no worker answers. On a terminal
 * one line is redrawn in place; elsewhere a line is printed whenever the state, iteration or pass
 * rate changes, and an indented one whenever the step does.
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
  // The client adds a listener to the signal for every request it makes under it and never takes
  // it off: each request gets a signal of its own, linked to Ctrl-C's for as long as it lasts.
  // `withinMs`: given up after that long, so that one slow answer does not hold the live view.
  const abortable = <T>(fn: () => Promise<T>, withinMs?: number): Promise<T> => {
    const call = new AbortController();
    const cancel = (): void => call.abort();
    abort.signal.addEventListener('abort', cancel);
    const timer = withinMs === undefined ? undefined : setTimeout(cancel, withinMs);
    return handle.client.withAbortSignal(call.signal, fn).finally(() => {
      clearTimeout(timer);
      abort.signal.removeEventListener('abort', cancel);
    });
  };
  const steps = new StepSummaries(handle.client);
  let ended: RunResult | null = null;
  let endError: unknown = null;
  let lastProgress = '';
  let lastStep = '';
  let lastSnapshot: RunSnapshot | null = null;
  let drewLine = false;
  // A query no worker answers is retried by the client for seconds, past a Ctrl-C: ask only
  // while one polls, and look again for one every few seconds.
  const { taskQueue } = await handle.describe();
  let workerCheckedAt = 0;
  let noWorker: string | null = null;
  let failedLooks = 0;
  try {
    while (!ended && !endError && !interrupted) {
      // Whether the run ended, and what it waits on, come from the server: they need no worker.
      let look: RunLook | null = null;
      try {
        look = await abortable(() => lookAtRun(handle, steps));
        failedLooks = 0;
      } catch (err) {
        // One failed look is a blip (each request is already retried); a server gone for good is
        // the caller's error to report, as a run that does not exist is at once.
        if (!interrupted && (err instanceof WorkflowNotFoundError || ++failedLooks >= MAX_FAILED_LOOKS))
          endError = err;
      }
      if (endError) break;
      if (look?.closed) {
        try {
          ended = await abortable(() => readRunResult(handle));
        } catch (err) {
          if (!interrupted) endError = err;
        }
        break;
      }
      if (Date.now() - workerCheckedAt >= WORKER_RECHECK_MS) {
        workerCheckedAt = Date.now();
        noWorker = await missingWorker(handle.client, taskQueue);
      }
      if (!options.quiet && !interrupted) {
        if (noWorker === null) {
          try {
            // A worker that died still holds the run for a while: its query would wait for the
            // server's timeout, and the live view with it, when the step line has news to show.
            lastSnapshot = await abortable(() => handle.query(stateQuery), QUERY_WITHIN_MS);
          } catch {
            // The worker went away, or is slow: look for one again before the next query.
            workerCheckedAt = 0;
          }
        }
        const progress = lastSnapshot ? progressLine(lastSnapshot, Date.now() - startedAt) : null;
        const step = noWorker !== null ? { text: noWorker, key: noWorker } : (look?.step ?? null);
        if (io.isTTY) {
          const line = [progress, step ? printableLine(step.text) : null].filter(Boolean).join('  ');
          // Clip to the terminal width: a wrapped line could not be redrawn in place.
          const width = process.stdout.columns;
          process.stdout.write(`\r\x1b[2K${width ? line.slice(0, width - 1) : line}`);
          drewLine = true;
        } else {
          if (lastSnapshot && progressKey(lastSnapshot) !== lastProgress) {
            lastProgress = progressKey(lastSnapshot);
            io.out(progress!);
          }
          if (step && step.key !== lastStep) {
            lastStep = step.key;
            io.out(`  ${printableLine(step.text)}`);
          }
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
  return { kind: 'ended', result: ended as unknown as RunResult };
}

interface RunLook {
  closed: boolean;
  step: StepLine | null;
}

/** The run's status and the step it waits on, from describe() and the end of its history. */
async function lookAtRun(handle: RunHandle, summaries: StepSummaries): Promise<RunLook> {
  const description = await handle.describe();
  if (description.status.name !== 'RUNNING') return { closed: true, step: null };
  const pending = description.raw?.pendingActivities ?? [];
  if (pending.length === 0)
    return {
      closed: false,
      step: waitingDecisionLine(description.raw?.pendingWorkflowTask, description.taskQueue, Date.now()),
    };
  const summaryOf = await summaries.lookUp(
    handle.workflowId,
    description.runId,
    pending.map((p) => p.activityId ?? ''),
  );
  const step = currentStep(pending.map((p) => pendingStep(p, summaryOf)));
  return { closed: false, step: step ? stepLine(step, Date.now()) : null };
}
