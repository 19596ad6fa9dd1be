import Long from 'long';
import { currentStep, pendingStep, stepLine, waitingDecisionLine } from '../../../src/cli/run-step';
import { progressLine } from '../../../src/cli/progress';
import { printableLine } from '../../../src/shared/terminal-text';

const NOW = 1_800_000_000_000;
// Timestamps and durations as the client decodes them (seconds as a Long).
const at = (ms: number) => ({ seconds: Long.fromNumber(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
const seconds = (s: number) => ({ seconds: Long.fromNumber(s), nanos: 0 });
const summaries: Record<string, string> = {
  '7': 'coder · edit_file src/stats.py',
  '9': 'planner · model step 1',
};
const summaryOf = (id: string) => summaries[id] ?? null;

describe('the live line names the step a run is on', () => {
  test('a step in progress is named by the summary the workflow gave it', () => {
    const step = pendingStep(
      {
        activityId: '7',
        activityType: { name: 'edit_file' },
        state: 2,
        attempt: 1,
        lastStartedTime: at(NOW - 1000),
        activityOptions: { heartbeatTimeout: seconds(20) },
      },
      summaryOf,
    );
    expect(stepLine(step, NOW).text).toBe('coder · edit_file src/stats.py');
  });

  test('a step without a summary is named by its activity type', () => {
    const step = pendingStep({ activityId: '3', activityType: { name: 'runTests' }, state: 1 }, summaryOf);
    expect(stepLine(step, NOW).text).toBe('runTests');
  });

  test('a retried step says its attempt and its last error, the model URL included', () => {
    const step = pendingStep(
      {
        activityId: '9',
        state: 1,
        attempt: 3,
        maximumAttempts: 8,
        scheduledTime: at(NOW - 2000),
        lastFailure: { message: 'model endpoint unreachable at http://127.0.0.1:9/v1: Connection error.' },
      },
      summaryOf,
    );
    const line = stepLine(step, NOW);
    expect(line.text).toBe(
      'planner · model step 1 · attempt 3 of 8, last error: model endpoint unreachable at http://127.0.0.1:9/v1: Connection error.',
    );
    // A new attempt is news on a log; the same attempt a second later is not.
    expect(stepLine(step, NOW + 1000).key).toBe(line.key);
    expect(stepLine({ ...step, attempt: 4 }, NOW).key).not.toBe(line.key);
  });

  test('a long error is clipped to one line', () => {
    const step = pendingStep(
      { activityId: '9', state: 1, attempt: 2, lastFailure: { message: `boom\n${'x'.repeat(1000)}` } },
      summaryOf,
    );
    const text = stepLine(step, NOW).text;
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThan(250);
  });

  test('a started step silent past its heartbeat timeout says its worker may have stopped', () => {
    const step = pendingStep(
      {
        activityId: '7',
        state: 2,
        attempt: 1,
        lastStartedTime: at(NOW - 40_000),
        lastHeartbeatTime: at(NOW - 30_000),
        lastWorkerIdentity: '4242@laptop',
        activityOptions: { heartbeatTimeout: seconds(20) },
      },
      summaryOf,
    );
    expect(stepLine(step, NOW).text).toBe(
      'coder · edit_file src/stats.py · no word from its worker 4242@laptop for 30s: it may have stopped; Temporal gives the step to another worker',
    );
    // Within its timeout, nothing is said.
    expect(stepLine(step, NOW - 15_000).text).toBe('coder · edit_file src/stats.py');
  });

  test('a step retried because its worker went silent says so, and that it waits for a worker', () => {
    const step = pendingStep(
      {
        activityId: '7',
        state: 1,
        attempt: 2,
        maximumAttempts: 8,
        scheduledTime: at(NOW - 25_000),
        lastFailure: { message: 'activity Heartbeat timeout', timeoutFailureInfo: { timeoutType: 4 } },
        activityOptions: { taskQueue: { name: 'aca-host-1' } },
      },
      summaryOf,
    );
    expect(stepLine(step, NOW).text).toBe(
      'coder · edit_file src/stats.py · attempt 2 of 8: the worker running the last attempt stopped answering · waiting 25s for a worker on aca-host-1',
    );
  });

  test('the step shown is the one scheduled last', () => {
    const older = pendingStep({ activityId: '9', scheduledTime: at(NOW - 9000) }, summaryOf);
    const newer = pendingStep({ activityId: '7', scheduledTime: at(NOW - 1000) }, summaryOf);
    expect(currentStep([newer, older])?.activityId).toBe('7');
    expect(currentStep([older, newer])?.activityId).toBe('7');
    expect(currentStep([])).toBeNull();
  });

  test("a decision nobody takes up names the run's task queue", () => {
    const task = { state: 1, scheduledTime: at(NOW - 12_000) };
    expect(waitingDecisionLine(task, 'coding-agent', NOW)?.text).toBe(
      "waiting 12s for a worker on coding-agent to take the run's next step",
    );
    expect(waitingDecisionLine(task, 'coding-agent', NOW - 5000)).toBeNull();
    expect(waitingDecisionLine({ ...task, state: 2 }, 'coding-agent', NOW)).toBeNull();
    expect(waitingDecisionLine(null, 'coding-agent', NOW)).toBeNull();
  });

  test('a target written by the model cannot move the cursor once rendered for the terminal', () => {
    const step = pendingStep({ activityId: '1' }, () => 'coder · edit_file \x1b[2J\rpwned\n.py');
    const shown = printableLine(`${progressLine(snapshot(), 1000)}  ${stepLine(step, NOW).text}`);
    expect(shown).not.toMatch(/[\x00-\x1f\x7f]/);
    expect(shown).toContain('edit_file');
  });
});

function snapshot() {
  return {
    workflowId: 'w',
    state: 'CODING',
    iterations: 1,
    maxIterations: 15,
    passRate: null,
    paused: false,
    waiting: null,
    tokens: { prompt: 1, completion: 2 },
    cost: null,
  } as unknown as Parameters<typeof progressLine>[0];
}
