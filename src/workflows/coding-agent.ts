import { ActivityFailure, ApplicationFailure, isCancellation, log } from '@temporalio/workflow';
import type { RunInput, RunResult } from '../shared/run-types';
import { continueAsNewIfSuggested } from './continue-as-new';
import { describeFailure } from './describe-failure';
import { PHASE_HANDLERS } from './phase-handlers';
import { RunContext, RunStopped, type CarriedState } from './run-context';
import { endRun } from './run-ending';
import { handleRunMessages } from './run-messages';
import { isEndState } from './state-machine';
import { FAILURE_TYPES } from '../shared/failure-types';
import { runFailedFailure } from '../shared/run-failure';

export type { CarriedState } from './run-context';

/**
 * One coding run: the state machine of state-machine.ts, driven by one handler per phase
 * (phase-handlers.ts) until the run ends. `carried` is set when the run continues as new.
 * A run that ends SUCCESS returns its RunResult; one that ends FAILED, cancelled included, fails
 * the workflow with that RunResult as the failure's details, so Temporal and its Web UI list it as
 * failed (readers get the RunResult back with readRunResult, src/shared/run-failure.ts).
 */
export async function codingAgentWorkflow(input: RunInput, carried?: CarriedState): Promise<RunResult> {
  const result = await runToEnd(new RunContext(input, carried));
  if (result.state !== 'SUCCESS') throw runFailedFailure(result);
  return result;
}

async function runToEnd(run: RunContext): Promise<RunResult> {
  handleRunMessages(run);
  try {
    run.publish();
    for (;;) {
      const phase = run.machine.phase;
      if (isEndState(phase)) {
        throw ApplicationFailure.nonRetryable(
          `the run has already ended ${phase}`,
          FAILURE_TYPES.forbiddenStateMove,
        );
      }
      const outcome = await PHASE_HANDLERS[phase](run);
      if ('end' in outcome) return await endRun(run, outcome.end);
      run.machine.move(outcome.next);
      if (outcome.next === 'CODING') await continueAsNewIfSuggested(run);
    }
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === FAILURE_TYPES.forbiddenStateMove) throw err;
    if (isCancellation(err)) {
      run.record.error = 'the run was cancelled';
      return await endRun(run, { state: 'FAILED', reason: 'cancelled', stopped: true });
    }
    if (err instanceof RunStopped) {
      run.record.error = err.message;
      return await endRun(run, { state: 'FAILED', reason: err.reason, stopped: true });
    }
    if (err instanceof ActivityFailure || err instanceof ApplicationFailure) {
      run.record.error = describeFailure(err);
      log.error('run failed', { error: run.record.error });
      return await endRun(run, { state: 'FAILED', reason: 'error', stopped: true });
    }
    throw err;
  }
}
