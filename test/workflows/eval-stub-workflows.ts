import {
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { RunInput } from '../../src/shared/run-types';
import { pauseSignal, resumeSignal } from '../../src/workflows/signals';

export { evalBatchWorkflow } from '../../src/workflows/eval-batch';

export const pausedQuery = defineQuery<boolean>('stubPaused');
export const releaseSignal = defineSignal('stubRelease');

/**
 * Stands in for a coding run under the batch: it costs a dollar, and one whose task says `hold`
 * waits for a release signal (or its cancellation); it records pauses and resumes.
 */
export async function codingAgentWorkflow(input: RunInput): Promise<unknown> {
  let paused = false;
  let released = false;
  setHandler(pauseSignal, () => void (paused = true));
  setHandler(resumeSignal, () => void (paused = false));
  setHandler(pausedQuery, () => paused);
  setHandler(releaseSignal, () => void (released = true));
  let reason: string | null = null;
  try {
    if (input.task.includes('hold')) await condition(() => released);
    else await sleep(10);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    reason = 'cancelled';
  }
  return CancellationScope.nonCancellable(async () => ({
    state: reason ? 'FAILED' : 'SUCCESS',
    reason,
    git: null,
    baseCommit: null,
    headCommit: null,
    cost: { usd: 1, byAgent: { planner: 1, coder: 0, tester: 0, reflector: 0 } },
    tokens: { prompt: 10, completion: 5 },
  }));
}
