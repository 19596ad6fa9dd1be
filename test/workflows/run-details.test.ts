import { summaryLines } from '../../src/cli/progress';
import type { RunSnapshot } from '../../src/shared/run-types';
import { renderDetails } from '../../src/workflows/details';

const TARGET = 'tests/test_more.py::LastTests::test_basic';

const snapshot: RunSnapshot = {
  workflowId: 'run-1',
  state: 'FAILED',
  reason: 'max_iterations',
  iterations: 1,
  maxIterations: 1,
  passRate: 736 / 737,
  tests: { passed: 736, failed: 1, errors: 0 },
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
  baseline: { passed: 735, failed: 1 },
  regressions: [],
  targets: [
    { id: TARGET, outcome: 'failed' },
    { id: 'tests/test_other.py', outcome: 'passed' },
  ],
  failingTests: [TARGET],
  unknownTargets: [],
  attempts: [],
  cost: null,
  parentRun: null,
  place: null,
  testCommand: 'pytest',
};

describe('targets and failing tests, named where a run is shown', () => {
  test('in the Web UI details', () => {
    const lines = renderDetails(snapshot).split('\n');
    expect(lines).toContain(`- **Targets:** ${TARGET} failed, tests/test_other.py passed`);
    expect(lines).toContain(`- **Still failing:** ${TARGET}`);
  });

  test('in the summary at the end of a run', () => {
    const { paused: _p, waiting: _w, ...result } = snapshot;
    const lines = summaryLines(result, 'http://ui');
    expect(lines).toContain(`  targets:   ${TARGET} failed, tests/test_other.py passed`);
    expect(lines).toContain(`  failing:   ${TARGET}`);
  });

  test('the Web UI names the first 20 failing tests and counts the rest', () => {
    const many = Array.from({ length: 23 }, (_, i) => `tests/t.py::test_${i}`);
    const line = renderDetails({ ...snapshot, failingTests: many })
      .split('\n')
      .find((l) => l.startsWith('- **Still failing:**'));
    expect(line).toBe(`- **Still failing:** ${many.slice(0, 20).join(', ')} and 3 more`);
  });

  test('a run without targets or failures shows neither line', () => {
    const quiet = { ...snapshot, targets: [], failingTests: [] };
    expect(renderDetails(quiet)).not.toMatch(/Targets|Still failing/);
    const { paused: _p, waiting: _w, ...result } = quiet;
    expect(summaryLines(result, 'http://ui').join('\n')).not.toMatch(/targets:|failing:/);
  });
});
