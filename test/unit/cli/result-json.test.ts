/**
 * `aca result --json` prints the workflow's result whole, every field as the run left it, plus its
 * review list: compared field by field, so a field dropped or renamed on the way fails here.
 */
import type { AcaClient } from '../../../src/api';
import { resultCommand } from '../../../src/cli/inspect-commands';
import type { RunResult, RunSnapshot } from '../../../src/shared/run-types';

const result: RunResult = {
  workflowId: 'run-7',
  state: 'FAILED',
  reason: 'max_iterations',
  iterations: 3,
  maxIterations: 3,
  passRate: 0.75,
  tests: { passed: 3, failed: 1, errors: 0 },
  workspace: '/w/run-7',
  files: ['a.py', 'b.py'],
  tokens: { prompt: 120, completion: 45, cached: 30, reasoning: 7 },
  transitions: [
    { from: 'INIT', to: 'PLANNING', at: '2026-01-01T00:00:00.000Z' },
    { from: 'REFLECTING', to: 'FAILED', at: '2026-01-01T00:05:00.000Z' },
  ],
  warning: 'iteration 2 of 3: 1 attempts left before the run fails',
  lastAnalysis: { rootCause: 'rc', fixHypothesis: 'fh', filesToChange: ['a.py'], testsWrong: false },
  error: 'the turn ended with finish instead of submit_analysis',
  repo: '/home/u/project',
  branch: 'aca/run-7',
  baseCommit: 'b'.repeat(40),
  headCommit: 'h'.repeat(40),
  changedFiles: [{ path: 'a.py', status: 'modified', added: 3, removed: 1 }],
  baseline: { passed: 2, failed: 2 },
  regressions: ['t::r'],
  targets: [{ id: 't::a', outcome: 'failed' }],
  failingTests: ['t::a', 't::r'],
  unknownTargets: [],
  attempts: [{ iteration: 3, commit: 'h'.repeat(40), passRate: 0.75 }],
  cost: { usd: 0.5, byAgent: { planner: 0.125, coder: 0.25, tester: 0, reflector: 0.125 } },
  parentRun: 'run-6',
  place: {
    workflowId: 'run-7',
    branch: 'aca/run-7',
    disk: 'disk-1',
    gitDir: '/g',
    commonDir: '/g',
    workTree: '/w/run-7',
  },
  testCommand: 'pytest -q',
};

function fakeClient(status: string, snapshot?: RunSnapshot): AcaClient {
  return {
    run: () => ({
      status: async () => status,
      state: async () => snapshot,
      result: async () => result,
      reviewRisks: async () => [],
    }),
    webUrl: () => 'http://ui/run-7',
  } as unknown as AcaClient;
}

function captured() {
  const lines: string[] = [];
  return { lines, io: { out: (l: string) => lines.push(l), err: () => undefined, isTTY: false } };
}

describe('aca result --json', () => {
  test('an ended run: the whole result, field by field, with its review list; exit status of a failed run', async () => {
    const { lines, io } = captured();
    expect(await resultCommand(fakeClient('COMPLETED'), 'run-7', { json: true, wait: true }, io)).toBe(1);
    const printed = JSON.parse(lines.join('\n')) as Record<string, unknown>;
    expect(printed).toEqual({ ...result, reviewWithCare: [] });
    expect(Object.keys(printed).sort()).toEqual(
      [
        'workflowId',
        'state',
        'reason',
        'iterations',
        'maxIterations',
        'passRate',
        'tests',
        'workspace',
        'files',
        'tokens',
        'transitions',
        'warning',
        'lastAnalysis',
        'error',
        'repo',
        'branch',
        'baseCommit',
        'headCommit',
        'changedFiles',
        'baseline',
        'regressions',
        'targets',
        'failingTests',
        'unknownTargets',
        'attempts',
        'cost',
        'parentRun',
        'place',
        'testCommand',
        'reviewWithCare',
      ].sort(),
    );
  });

  test('a run still going, with --no-wait: its current snapshot whole', async () => {
    const snapshot: RunSnapshot = { ...result, state: 'CODING', reason: null, paused: false, waiting: null };
    const { lines, io } = captured();
    expect(
      await resultCommand(fakeClient('RUNNING', snapshot), 'run-7', { json: true, wait: false }, io),
    ).toBe(0);
    expect(JSON.parse(lines.join('\n'))).toEqual(snapshot);
  });
});
