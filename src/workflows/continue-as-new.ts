import { allHandlersFinished, condition, continueAsNew, log, workflowInfo } from '@temporalio/workflow';
import type { RunInput, RunResult } from '../shared/run-types';
import type { CarriedState, RunContext } from './run-context';

/**
 * Between attempts, once the server suggests it (history is getting long), the run carries its
 * state into a fresh execution of the same workflow id. An execution always makes at least one
 * attempt, so a run cannot hand itself on forever without progress.
 */
export async function continueAsNewIfSuggested(run: RunContext): Promise<void> {
  if (run.attemptsThisExecution === 0 || !workflowInfo().continueAsNewSuggested) return;
  await condition(allHandlersFinished);
  await run.memory.drained();
  log.info('continuing as new', {
    nextIteration: run.record.iterations + 1,
    historyLength: workflowInfo().historyLength,
  });
  await continueAsNew<(input: RunInput, carried?: CarriedState) => Promise<RunResult>>(
    run.input,
    run.carry(),
  );
}
