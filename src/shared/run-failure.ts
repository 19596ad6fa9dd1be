/**
 * How a FAILED run ends in Temporal, and how its readers get its RunResult back. A run that ends
 * SUCCESS completes with its RunResult; one that ends FAILED (cancelled included) fails the
 * workflow with an ApplicationFailure of type AcaRunFailed, non-retryable, whose message is the
 * outcome in one line and whose first detail is the RunResult. The Web UI then lists it as Failed
 * with the reason on its page, and every aca reader turns that failure back into the RunResult
 * with runResultOfFailure. Workflow code imports this file: no Node built-ins here.
 */
import { ApplicationFailure } from '@temporalio/common';
import { clipEnd, oneLine } from './clip-text';
import { FAILURE_TYPES } from './failure-types';
import { passRateText } from './pass-rate';
import type { RunResult } from './run-types';

/** Room for the message: the Web UI shows it whole on the run's page. */
const MESSAGE_CHARS = 600;

/** The outcome in one line: state and reason, attempts, pass rate and the last error. */
export function runFailedMessage(result: RunResult): string {
  const attempts = `after ${result.iterations} of at most ${result.maxIterations} iteration${result.maxIterations === 1 ? '' : 's'}`;
  const rate = `pass rate ${passRateText(result.passRate, result.tests)}`;
  const error = result.error ? `: ${oneLine(result.error)}` : '';
  return clipEnd(`FAILED ${result.reason ?? 'unknown reason'} ${attempts}, ${rate}${error}`, MESSAGE_CHARS);
}

/** The failure a FAILED run's workflow ends with. */
export function runFailedFailure(result: RunResult): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.runFailed,
    message: runFailedMessage(result),
    nonRetryable: true,
    details: [result],
  });
}

/**
 * The RunResult a FAILED run's failure carries, wherever it is in the error's cause chain (a
 * client's WorkflowFailedError, a parent workflow's ChildWorkflowFailure); null for any other error.
 */
export function runResultOfFailure(err: unknown): RunResult | null {
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof ApplicationFailure && current.type === FAILURE_TYPES.runFailed) {
      const result = current.details?.[0] as RunResult | undefined;
      return result && typeof result === 'object' ? result : null;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * The RunResult of a run handle's result(), whichever way the run ended: the value of one that
 * ended SUCCESS, the failure's details of one that ended FAILED. Any other error is rethrown.
 */
export async function readRunResult(handle: { result(): Promise<unknown> }): Promise<RunResult> {
  try {
    return (await handle.result()) as RunResult;
  } catch (err) {
    const result = runResultOfFailure(err);
    if (result) return result;
    throw err;
  }
}
