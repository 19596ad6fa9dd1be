import { log, setHandler } from '@temporalio/workflow';
import type { RunContext } from './run-context';
import { feedbackUpdate, MAX_FEEDBACK_CHARS, pauseSignal, resumeSignal, stateQuery } from './signals';

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
        if (typeof text !== 'string' || text.trim() === '') throw new Error('feedback text is empty');
        if (text.length > MAX_FEEDBACK_CHARS)
          throw new Error(`feedback is longer than ${MAX_FEEDBACK_CHARS} characters`);
      },
    },
  );
}
