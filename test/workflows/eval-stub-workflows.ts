import {
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import { runFailedFailure } from '../../src/shared/run-failure';
import type { RunInput, RunResult } from '../../src/shared/run-types';
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
  const result = {
    state: reason ? 'FAILED' : 'SUCCESS',
    reason,
    iterations: 1,
    maxIterations: 1,
    passRate: null,
    tests: { passed: 0, failed: 0, errors: 0 },
    error: reason ? 'the run was cancelled' : null,
    git: null,
    baseCommit: null,
    headCommit: null,
    cost: { usd: 1, byAgent: { planner: 1, coder: 0, tester: 0, reflector: 0 } },
    tokens: { prompt: 10, completion: 5 },
  } as unknown as RunResult;
  // As the real run does: one that ends FAILED fails its workflow with its result as details.
  return CancellationScope.nonCancellable(async () => {
    if (result.state !== 'SUCCESS') throw runFailedFailure(result);
    return result;
  });
}
