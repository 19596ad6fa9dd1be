/**
 * What a run takes from its input and hands its steps, and what it records when it ends before
 * its first attempt, through the workflow fake (see workflow-run-data.test.ts): sandbox limits,
 * a run without a workspace, the cap on the Planner's targets, a baseline without failing tests,
 * a cancel that reaches a host step.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { CancelledFailure } from '@temporalio/common';
import { describeTargets, MAX_TARGETS, type TargetResult } from '../../src/shared/targets';
import { codingAgentWorkflow } from '../../src/workflows/coding-agent';
import { failingTests, fakeRunInput, FINISHES, setUpFakeRun, type FakeRunScript } from '../helpers/fake-run';
import { runOutcome } from '../helpers/fake-run';
import { fake } from '../helpers/workflow-fake';

function runWorkflow(script: FakeRunScript, ...input: Parameters<typeof fakeRunInput>) {
  const log = setUpFakeRun(script);
  const result = runOutcome(codingAgentWorkflow(fakeRunInput(...input)));
  return { log, result };
}

const callsOf = (name: string) => fake.calls.filter((c) => c.name === name);

describe("the run's input", () => {
  test('sandbox limits given for the run reach the step that prepares it', async () => {
    const limits = { wallTimeSeconds: 30, memoryMiB: 512 };
    const { result } = runWorkflow({}, {}, { limits });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(callsOf('prepareRun').map((c) => c.args)).toEqual([
      [
        {
          workflowId: 'wf-1',
          workspace: '/nonexistent/stub-workspace',
          language: 'python',
          repo: null,
          testCommand: null,
          setupCommand: null,
          limits: { wallTimeSeconds: 30, memoryMiB: 512 },
          start: null,
        },
      ],
    ]);
  });

  test('a run without a workspace whose preparation fails records an empty workspace and takes no host step', async () => {
    const { result } = runWorkflow(
      {
        activities: {
          prepareRun: async () => {
            throw new Error('disk full');
          },
        },
      },
      {},
      { workspace: undefined },
    );
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      workspace: '',
      headCommit: null,
      files: [],
    });
    expect(callsOf('prepareRun')[0]!.args).toEqual([
      {
        workflowId: 'wf-1',
        language: 'python',
        repo: null,
        testCommand: null,
        setupCommand: null,
        start: null,
      },
    ]);
    expect(fake.calls.map((c) => c.name)).toEqual(['prepareRun']);
  });
});

describe("the Planner's targets", () => {
  test(`a run ${MAX_TARGETS - 1} targets in takes only the first new one the plan names; the next Coder hears of the rest`, async () => {
    const given = Array.from({ length: MAX_TARGETS - 1 }, (_, i) => `tests/test_a.py::test_${i}`);
    const named = ['tests/test_a.py::test_x', 'tests/test_a.py::test_y', 'tests/test_a.py::test_z'];
    const plan = FINISHES.planner!.tool === 'submit_plan' ? FINISHES.planner!.plan : null;
    const { log, result } = runWorkflow(
      {
        step: (turnKey) =>
          turnKey === 'planner'
            ? { finished: { tool: 'submit_plan', plan: { ...plan!, targets: named } } }
            : {},
        activities: {
          prepareWorkspace: async () => ({ protectedPaths: ['tests/test_a.py'], commit: 'acc' }),
        },
      },
      { maxIterations: 1, warnAt: 1 },
      { targets: given, testsDir: '/home/u/tests' },
    );
    const done = await result;
    const targets: TargetResult[] = [...given, named[0]!].map((id) => ({ id, outcome: 'missing' }));
    expect(done.targets).toEqual(targets);
    expect(done.targets).toHaveLength(MAX_TARGETS);
    expect((log.opens.get('coder-1')!.context as { notes?: string[] }).notes).toEqual([
      `The plan named target tests that do not exist: ${named[1]}, ${named[2]}. The run does not require them; the targets it requires are ${describeTargets(targets)}.`,
    ]);
    expect((callsOf('runTests')[0]!.args[0] as { targets: string[] }).targets).toEqual([...given, named[0]]);
  });
});

describe('a run that ends before its first test run', () => {
  test('a --repo run whose baseline reports no failing-test list records none when stopped while planning', async () => {
    const { result } = runWorkflow(
      { tests: (attempt) => (attempt === 0 ? { ...failingTests, failingTests: undefined } : {}) },
      { maxTokens: 10 },
      { repo: { path: '/home/u/project', baseCommit: 'base' } },
    );
    expect(await result).toMatchObject({
      state: 'FAILED',
      reason: 'budget',
      baseline: { passed: 1, failed: 1 },
      failingTests: [],
      regressions: [],
      attempts: [],
    });
  });

  test('a cancel that reaches a step on the host ends the run cancelled', async () => {
    const { result } = runWorkflow({
      tests: () => {
        throw new CancelledFailure('cancelled');
      },
    });
    expect(await result).toMatchObject({
      state: 'FAILED',
      reason: 'cancelled',
      error: 'the run was cancelled',
    });
    expect(callsOf('runTests')).toHaveLength(1);
    expect(callsOf('hostAlive')).toEqual([]);
    expect(callsOf('adoptRun')).toEqual([]);
  });
});
