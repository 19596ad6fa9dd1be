import { CancellationScope, log } from '@temporalio/workflow';
import type { RememberAttemptInput, RememberOutcomeInput } from '../activities/memory-activities';
import type { RunResult } from '../shared/run-types';
import type { FailureReason } from '../shared/types';
import type { RunContext } from './run-context';
import type { EndState } from './state-machine';
import { countRunFinished } from './visibility';

export type RunEnding =
  /** The tests passed, or the attempts ran out: the last attempt is stored with the outcome. */
  | { state: EndState; reason: 'max_iterations' | null; lastAttempt: RememberAttemptInput }
  /** Cancelled, over budget or failed by an error, in whatever phase the run was. */
  | { state: 'FAILED'; reason: Exclude<FailureReason, 'max_iterations'>; stopped: true };

/**
 * Stores the outcome in failure memory, waits for every queued memory write, lists the
 * workspace, and only then makes the last move: a run reported ended has its memory saved.
 */
export async function endRun(run: RunContext, ending: RunEnding): Promise<RunResult> {
  // A paused run ends only once resumed, unless it was stopped: a cancel must not wait.
  if (!('stopped' in ending)) await run.whenNotPaused();
  run.ending = true;
  run.record.reason = ending.reason;
  const outcome = {
    workflowId: run.workflowId,
    status: ending.state === 'SUCCESS' ? 'success' : 'failed',
    reason: ending.reason,
    fix: describeFix(run, ending.state),
  } as const;
  // A run that ended before planning (a failed setup command) left nothing in memory to learn from.
  if (run.work.taskRemembered) storeOutcome(run, ending, outcome);
  await CancellationScope.nonCancellable(async () => {
    run.publish('Saving failure memory before the run ends…');
    const [closed] = await Promise.all([
      run.hostStep()
        ? run.onHost((host) =>
            host.files.closeRun.executeWithOptions(
              { summary: 'git · changed files; give the workspace back from the sandbox user' },
              [
                {
                  ...run.hostStep()!,
                  baseCommit: run.record.baseCommit,
                  // A repository's own files are not news: a --repo run lists what it changed.
                  listFiles: !run.input.repo,
                },
              ],
            ),
          )
        : null,
      run.memory.drained(),
    ]);
    if (closed) {
      run.record.changedFiles = closed.changedFiles;
      run.record.files =
        closed.files ?? closed.changedFiles.filter((f) => f.status !== 'deleted').map((f) => f.path);
    }
  });
  if (run.memory.lost > 0)
    log.error('failure memory records lost after retrying for an hour', { count: run.memory.lost });
  if ('stopped' in ending) run.machine.stop();
  else run.machine.move(ending.state);
  countRunFinished(ending.state, ending.reason);
  const { paused: _paused, waiting: _waiting, ...result } = run.snapshot();
  return result;
}

/** What made the difference, stored against this run's earlier failures. */
function describeFix(run: RunContext, state: EndState): { iteration: number; summary: string } | null {
  const { iterations, lastAnalysis } = run.record;
  if (state !== 'SUCCESS' || iterations <= 1) return null;
  const coder = run.work.lastCoderSummary;
  const summary = [
    coder ? `Attempt ${iterations} passed after: ${coder}` : `Attempt ${iterations} passed.`,
    lastAnalysis ? `The analysis that led to it: ${lastAnalysis.fixHypothesis}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { iteration: iterations, summary };
}

function storeOutcome(
  run: RunContext,
  ending: RunEnding,
  outcome: Omit<RememberOutcomeInput, 'lastAttempt'>,
): void {
  const { memoryWrites } = run.activities;
  if ('lastAttempt' in ending) {
    const lastAttempt = ending.lastAttempt;
    run.memory.add('outcome', () =>
      memoryWrites.rememberOutcome.executeWithOptions(
        { summary: `memory · store attempt ${lastAttempt.iteration} and outcome` },
        [{ ...outcome, lastAttempt }],
      ),
    );
  } else {
    run.memory.add('outcome', () =>
      memoryWrites.rememberOutcome.executeWithOptions({ summary: 'memory · store outcome' }, [outcome]),
    );
  }
}
