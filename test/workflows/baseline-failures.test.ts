/**
 * Tests that failed on the base commit and still fail when a run ends SUCCESS are said out loud:
 * in the summary, `aca status`/`result` and the Web UI details, on a line of their own that names
 * them and suggests `--target`; and the Planner is told which tests fail at the baseline.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { buildUserMessage } from '../../src/agents/user-message';
import { summaryLines } from '../../src/cli/progress';
import { baselineFailuresLine } from '../../src/shared/baseline-failures';
import type { RunSnapshot } from '../../src/shared/run-types';
import { codingAgentWorkflow } from '../../src/workflows/coding-agent';
import { renderDetails } from '../../src/workflows/details';
import { fakeRunInput, setUpFakeRun } from '../helpers/fake-run';
import { runOutcome } from '../helpers/fake-run';

const EMPTY = 'tests/test_stats.py::test_mean_empty';

const succeeded: RunSnapshot = {
  workflowId: 'run-1',
  state: 'SUCCESS',
  reason: null,
  iterations: 1,
  maxIterations: 15,
  passRate: 3 / 4,
  tests: { passed: 3, failed: 1, errors: 0 },
  workspace: '/w',
  files: [],
  tokens: { prompt: 1, completion: 1 },
  transitions: [],
  paused: false,
  waiting: null,
  warning: null,
  lastAnalysis: null,
  error: null,
  repo: '/r',
  branch: 'aca/run-1',
  baseCommit: 'b',
  headCommit: 'h',
  changedFiles: [],
  baseline: { passed: 2, failed: 1 },
  regressions: [],
  targets: [],
  failingTests: [EMPTY],
  unknownTargets: [],
  attempts: [],
  cost: null,
  parentRun: null,
  place: null,
  testCommand: 'pytest',
};

const LINE = `1 test that failed before the run still fails: ${EMPTY}; the run did not have to fix it (no target named it): run again with --target ${EMPTY} to require it`;

describe('a SUCCESS with tests that failed at the baseline and still fail', () => {
  test('one line names them and suggests --target', () => {
    expect(baselineFailuresLine(succeeded)).toBe(LINE);
  });

  test('no line for a run that failed, or that left nothing failing', () => {
    expect(baselineFailuresLine({ ...succeeded, state: 'FAILED' })).toBeNull();
    expect(
      baselineFailuresLine({ ...succeeded, failingTests: [], tests: { passed: 3, failed: 0, errors: 0 } }),
    ).toBeNull();
  });

  test('the names are bounded: five shown, the rest counted', () => {
    const many = Array.from({ length: 8 }, (_, i) => `t.py::test_${i}`);
    const line = baselineFailuresLine({
      ...succeeded,
      failingTests: many,
      tests: { passed: 1, failed: 70, errors: 2 },
    });
    expect(line).toBe(
      `72 tests that failed before the run still fail: ${many.slice(0, 5).join(', ')} and 67 more; the run did not have to fix them (no target named them): run again with --target t.py::test_0 to require it`,
    );
  });

  test('the summary of aca run and aca result says it on its own line, the Web UI details too', () => {
    const { paused: _p, waiting: _w, ...result } = succeeded;
    expect(summaryLines(result, 'http://ui')).toContain(`  warning:   ${LINE}`);
    expect(renderDetails(succeeded).split('\n')).toContain(`- **Failing before and after the run:** ${LINE}`);
  });

  test('a hidden character in a test name is escaped on the terminal', () => {
    const { paused: _p, waiting: _w, ...result } = succeeded;
    const lines = summaryLines({ ...result, failingTests: ['t.py::test_\u001b[2Jx'] }, 'http://ui');
    const warning = lines.find((l) => l.startsWith('  warning:'))!;
    expect(warning).not.toContain('\u001b');
    expect(warning).toContain('"t.py::test_\\x1b[2Jx"');
  });
});

describe("the Planner's first message", () => {
  const context = {
    role: 'planner' as const,
    task: 'mean() fails on empty input (test_mean_empty); fix it',
    language: 'python' as const,
    attempt: 1,
    maxIterations: 15,
    protectedPaths: [],
  };

  test('lists the tests that fail at the baseline and says to name them as targets', () => {
    const message = buildUserMessage({ ...context, baselineFailures: { names: [EMPTY], count: 1 } }, null);
    expect(message).toContain(
      `Tests that already fail on the base commit, before any change (1):\n- ${EMPTY}\n`,
    );
    expect(message).toContain("name it in submit_plan's targets");
    expect(buildUserMessage(context, null)).not.toContain('already fail on the base commit');
  });

  test('the workflow gives the Planner the baseline failures of a --repo run', async () => {
    const log = setUpFakeRun({
      tests: (attempt) => (attempt === 0 ? { passed: 2, failed: 1, failingTests: [EMPTY] } : {}),
    });
    await runOutcome(codingAgentWorkflow(fakeRunInput({}, { repo: { path: '/r', baseCommit: 'base' } })));
    expect(log.opens.get('planner')?.context.baselineFailures).toEqual({ names: [EMPTY], count: 1 });
    // Only the Planner is told: the Coder's context is as it was.
    expect(log.opens.get('coder-1')?.context.baselineFailures).toBeUndefined();
  });

  test('a baseline without failures tells it nothing', async () => {
    const log = setUpFakeRun({ tests: () => ({}) });
    await runOutcome(codingAgentWorkflow(fakeRunInput({}, { repo: { path: '/r', baseCommit: 'base' } })));
    expect(log.opens.get('planner')?.context).not.toHaveProperty('baselineFailures');
  });
});
