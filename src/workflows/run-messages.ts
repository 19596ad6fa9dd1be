import { log, setHandler } from '@temporalio/workflow';
import type { RunContext } from './run-context';
import {
  extendUpdate,
  feedbackUpdate,
  MAX_FEEDBACK_CHARS,
  pauseSignal,
  resumeSignal,
  stateQuery,
} from './signals';

/** The run's query, signals and update: what `aca status`, `pause`, `resume` and `feedback` reach. */
export function handleRunMessages(run: RunContext): void {
  setHandler(stateQuery, () => run.snapshot());
  setHandler(pauseSignal, () => {
    if (run.ending) return;
    if (run.machine.pause()) log.info('run paused', { phase: run.machine.phase });
  });
  setHandler(resumeSignal, () => {
    if (run.machine.resume()) log.info('run resumed', { phase: run.machine.phase });
  });
  setHandler(
    feedbackUpdate,
    (text) => {
      run.work.pendingFeedback.push(text.trim());
      return { accepted: true as const, pending: run.work.pendingFeedback.length };
    },
    {
      validator: (text) => {
        if (run.ending || run.machine.ended)
          throw new Error(`the run has already ended (${run.machine.state})`);
        checkFeedback(text);
      },
    },
  );
  setHandler(
    extendUpdate,
    ({ iterations, feedback }) => {
      if (feedback !== undefined) run.work.pendingFeedback.push(feedback.trim());
      run.work.extension = { iterations };
      return { maxIterations: run.record.maxIterations + iterations };
    },
    {
      validator: (request) => {
        if (run.record.waiting !== 'limit' || run.work.extension !== null || run.ending) {
          throw new Error('the run is not waiting at its iteration limit');
        }
        const iterations = request?.iterations;
        if (
          typeof iterations !== 'number' ||
          !Number.isInteger(iterations) ||
          iterations < 1 ||
          iterations > 1000
        ) {
          throw new Error('iterations must be a whole number from 1 to 1000');
        }
        if (request.feedback !== undefined) checkFeedback(request.feedback);
      },
    },
  );
}

function checkFeedback(text: unknown): void {
  if (typeof text !== 'string' || text.trim() === '') throw new Error('feedback text is empty');
  if (text.length > MAX_FEEDBACK_CHARS)
    throw new Error(`feedback is longer than ${MAX_FEEDBACK_CHARS} characters`);
}
