/**
 * Why an eval instance's run makes it an error instance (runErrorOf): the run's closing message,
 * whose last lines are what the environment printed, is kept from start to end on one line.
 */
import { runErrorOf } from '../../../src/activities/eval-activities';
import { runNotRun, NO_TOKENS, type EvalRunOutcome } from '../../../src/shared/eval-run';

function endedRun(reason: string | null, message: string | null): EvalRunOutcome {
  return {
    ...runNotRun('wf', ''),
    error: null,
    state: 'FAILED',
    reason,
    message,
    tokens: NO_TOKENS,
  };
}

describe('the reason of an error instance', () => {
  test("a baseline that could not run: the message's last output is kept, on one line", () => {
    const message =
      'the baseline could not run: ModuleNotFoundError: no module named itsdangerous; last output:\nE   ImportError\nE   while importing tests/test_x.py';
    const reason = runErrorOf(endedRun('environment', message))!;
    expect(reason).toMatch(/^the run ended FAILED \(environment\): the baseline could not run/);
    expect(reason).toContain('while importing tests/test_x.py');
    expect(reason).not.toContain('\n');
  });

  test('a long message keeps its start and its end and says what was cut', () => {
    const message = `start of it; last output:\n${'x'.repeat(5_000)}\nthe last line`;
    const reason = runErrorOf(endedRun('error', message))!;
    expect(reason.length).toBeLessThan(700);
    expect(reason).toContain('start of it');
    expect(reason).toContain('the last line');
    expect(reason).toMatch(/characters cut/);
  });

  test('a run the model could not finish is not an error instance: its patch is evaluated', () => {
    expect(runErrorOf(endedRun('max_iterations', 'gave up'))).toBeNull();
  });
});
