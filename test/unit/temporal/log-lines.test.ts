import { ApplicationFailure } from '@temporalio/common';
import type { LogEntry, LogLevel } from '@temporalio/worker';
import { logLineWriter } from '../../../src/temporal/log-lines';
import { runFailedFailure } from '../../../src/shared/run-failure';
import type { RunResult } from '../../../src/shared/run-types';

/** What a writer at `level` prints for `entry`, stream by stream. */
function written(level: LogLevel, entry: LogEntry): { out: string; err: string } {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  try {
    logLineWriter(level)(entry);
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return { out: out.join(''), err: err.join('') };
}

function workflowFailed(error: Error): LogEntry {
  return {
    level: 'WARN',
    message: 'Workflow failed',
    timestampNanos: 1_700_000_000_000_000_000n,
    meta: { sdkComponent: 'worker', workflowId: 'run-1', workflowType: 'codingAgentWorkflow', error },
  };
}

const FAILED = {
  state: 'FAILED',
  reason: 'max_iterations',
  iterations: 2,
  maxIterations: 2,
  passRate: 0.5,
  tests: { passed: 1, failed: 1, errors: 0 },
  error: null,
} as unknown as RunResult;

describe("the worker's log", () => {
  test('a run that ended FAILED is one INFO line with its outcome, not a warning with a stack', () => {
    const { out, err } = written('INFO', workflowFailed(runFailedFailure(FAILED)));
    expect(err).toBe('');
    expect(out).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO  run ended FAILED max_iterations after 2 of at most 2 iterations, pass rate 50% workflowId=run-1 /,
    );
    expect(out.split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('at WARN that line is not shown', () => {
    expect(written('WARN', workflowFailed(runFailedFailure(FAILED)))).toEqual({ out: '', err: '' });
  });

  test('any other workflow failure stays a warning', () => {
    const { out, err } = written(
      'INFO',
      workflowFailed(ApplicationFailure.nonRetryable('the run cannot move', 'ForbiddenStateMove')),
    );
    expect(out).toBe('');
    expect(err).toMatch(/ WARN  Workflow failed workflowId=run-1 .*error="the run cannot move"/);
  });
});
