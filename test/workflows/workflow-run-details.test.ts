/**
 * The run's details in the Web UI, rendered whole: a run with every section and a run with none,
 * compared line by line, so a line dropped, reordered or misworded fails here.
 */
import type { RunSnapshot } from '../../src/shared/run-types';
import { renderDetails } from '../../src/workflows/details';

const quiet: RunSnapshot = {
  workflowId: 'run-1',
  state: 'PLANNING',
  reason: null,
  iterations: 0,
  maxIterations: 15,
  passRate: null,
  tests: { passed: 0, failed: 0, errors: 0 },
  workspace: '/w',
  files: [],
  tokens: { prompt: 0, completion: 0 },
  transitions: [],
  paused: false,
  waiting: null,
  warning: null,
  lastAnalysis: null,
  error: null,
  repo: null,
  branch: null,
  baseCommit: null,
  headCommit: null,
  changedFiles: [],
  baseline: null,
  regressions: [],
  targets: [],
  failingTests: [],
  unknownTargets: [],
  attempts: [],
  cost: null,
  parentRun: null,
  place: null,
  testCommand: null,
};

describe('the details of a run in the Web UI', () => {
  test('a run that has not tested yet: state, iteration, pass rate and tokens only', () => {
    expect(renderDetails(quiet).split('\n')).toEqual([
      '- **State:** PLANNING',
      '- **Iteration:** 0/15',
      '- **Pass rate:** not run yet (0 passed, 0 failed, 0 errors)',
      '- **Tokens:** 0 prompt, 0 completion',
    ]);
  });

  test('a run with every section', () => {
    const files = Array.from({ length: 22 }, (_, i) => ({
      path: `f${i}.py`,
      status: 'modified' as const,
      added: i,
      removed: 1,
    }));
    const failing = Array.from({ length: 21 }, (_, i) => `t::f${i}`);
    const full: RunSnapshot = {
      ...quiet,
      state: 'CODING',
      paused: true,
      iterations: 3,
      waiting: 'limit',
      passRate: 0.5,
      tests: { passed: 2, failed: 1, errors: 1 },
      tokens: { prompt: 100, completion: 40, cached: 30, reasoning: 9 },
      cost: { usd: 0.123456, byAgent: { planner: 0.1, coder: 0.023456, tester: 0, reflector: 0 } },
      branch: 'aca/run-1',
      repo: '/home/u/project',
      headCommit: '0123456789abcdef',
      testCommand: 'pytest -q',
      baseline: { passed: 7, failed: 2 },
      targets: [
        { id: 't::a', outcome: 'passed' },
        { id: 't::b', outcome: 'failed' },
      ],
      regressions: ['t::r1', 't::r2'],
      failingTests: failing,
      changedFiles: files,
      warning: 'iteration 3 of 15',
      error: 'the turn ended with finish instead of submit_plan',
      lastAnalysis: {
        rootCause: 'rc',
        fixHypothesis: 'fh',
        filesToChange: ['a.py', 'b.py'],
        testsWrong: true,
      },
    };
    expect(renderDetails(full).split('\n')).toEqual([
      '- **State:** CODING (`aca resume` continues the run)',
      '- **Iteration:** 3/15',
      '- **Waiting:** at its iteration limit; `aca extend run-1 --iterations N` gives it N more attempts, else it ends FAILED max_iterations when its wait is over',
      '- **Pass rate:** 50% (2 passed, 1 failed, 1 errors)',
      '- **Tokens:** 100 prompt (30 cached), 40 completion (9 reasoning)',
      '- **Cost:** $0.1235 (planner $0.1000, coder $0.0235)',
      '- **Branch:** aca/run-1 of /home/u/project (head 0123456789)',
      '- **Tests run with:** pytest -q',
      '- **Baseline:** 7 passed, 2 failing',
      '- **Targets:** t::a passed, t::b failed',
      '- **Regressions:** t::r1, t::r2',
      `- **Still failing:** ${failing.slice(0, 20).join(', ')} and 1 more`,
      `- **Changed files:** ${files
        .slice(0, 20)
        .map((f) => `${f.path} (+${f.added} -1)`)
        .join(', ')} and 2 more`,
      '- **Warning:** iteration 3 of 15',
      '- **Last error:** the turn ended with finish instead of submit_plan',
      '',
      '### Latest analysis',
      '- **Root cause:** rc',
      '- **Fix hypothesis:** fh',
      '- **Files to change:** a.py, b.py',
      '- **Tests wrong:** yes',
    ]);
  });

  test('edges: exactly 20 failing tests and files, no repository, no head, a cost with no agent above zero', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `t::f${i}`);
    const files = twenty.map((_, i) => ({
      path: `f${i}.py`,
      status: 'added' as const,
      added: 1,
      removed: 0,
    }));
    const lines = renderDetails({
      ...quiet,
      branch: 'aca/run-1',
      failingTests: twenty,
      changedFiles: files,
      cost: { usd: 0, byAgent: { planner: 0, coder: 0, tester: 0, reflector: 0 } },
      lastAnalysis: { rootCause: 'rc', fixHypothesis: 'fh', filesToChange: [], testsWrong: false },
    }).split('\n');
    expect(lines.slice(4)).toEqual([
      '- **Cost:** $0.0000',
      '- **Branch:** aca/run-1 (head -)',
      `- **Still failing:** ${twenty.join(', ')}`,
      `- **Changed files:** ${files.map((f) => `${f.path} (+1 -0)`).join(', ')}`,
      '',
      '### Latest analysis',
      '- **Root cause:** rc',
      '- **Fix hypothesis:** fh',
      '- **Files to change:** -',
      '- **Tests wrong:** no',
    ]);
  });
});
