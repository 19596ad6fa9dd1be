/**
 * What a run shows and hands on besides its transitions, through the workflow fake (see
 * workflow-run-data.test.ts): the search attributes it upserts (only when they change), the note
 * and logs of its ending, the logs of a failed turn, and the state it carries to its next
 * execution, pinned on exact values.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import type { RunInput } from '../../src/shared/run-types';
import { codingAgentWorkflow, type CarriedState } from '../../src/workflows/coding-agent';
import { failingTests, fakeRunInput, FINISHES, setUpFakeRun, type FakeRunScript } from '../helpers/fake-run';
import { runOutcome } from '../helpers/fake-run';
import { ContinuedAsNew, fake } from '../helpers/workflow-fake';

function runWorkflow(script: FakeRunScript, ...input: Parameters<typeof fakeRunInput>) {
  const log = setUpFakeRun(script);
  const result = runOutcome(codingAgentWorkflow(fakeRunInput(...input)));
  return { log, result };
}

const listed = () => fake.searchAttributes.map((attrs) => attrs.map((a) => a.value));

describe('search attributes', () => {
  test('a run upserts them only when one changes, though it publishes its details far more often', async () => {
    const { result } = runWorkflow({});
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 1, passRate: 1 });
    expect(listed()).toEqual([
      ['INIT', 0, 0, 'python'],
      ['PLANNING', 0, 0, 'python'],
      ['CODING', 0, 0, 'python'],
      ['CODING', 1, 0, 'python'],
      ['TESTING', 1, 0, 'python'],
      ['TESTING', 1, 1, 'python'],
      ['SUCCESS', 1, 1, 'python'],
    ]);
    expect(fake.searchAttributes.map((attrs) => attrs.map((a) => a.key.name))).toEqual(
      Array.from({ length: 7 }, () => ['AgentState', 'AgentIteration', 'AgentPassRate', 'AgentLanguage']),
    );
    expect(fake.details.length).toBeGreaterThan(7);
  });

  test('a run that fails its first attempt lists each attempt and pass rate once', async () => {
    const { result } = runWorkflow({ tests: (attempt) => (attempt === 1 ? failingTests : {}) });
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(listed()).toEqual([
      ['INIT', 0, 0, 'python'],
      ['PLANNING', 0, 0, 'python'],
      ['CODING', 0, 0, 'python'],
      ['CODING', 1, 0, 'python'],
      ['TESTING', 1, 0, 'python'],
      ['TESTING', 1, 0.5, 'python'],
      ['REFLECTING', 1, 0.5, 'python'],
      ['CODING', 1, 0.5, 'python'],
      ['CODING', 2, 0.5, 'python'],
      ['TESTING', 2, 0.5, 'python'],
      ['TESTING', 2, 1, 'python'],
      ['SUCCESS', 2, 1, 'python'],
    ]);
  });
});

describe('the ending', () => {
  test('the run shows that it is saving failure memory, once, before its last move', async () => {
    const { result } = runWorkflow({});
    await result;
    const note = '\n\n_Saving failure memory before the run ends…_';
    expect(fake.details.filter((d) => d.endsWith(note))).toHaveLength(1);
    expect(fake.details.at(-2)!.endsWith(note)).toBe(true);
    expect(fake.details.at(-1)!.endsWith(note)).toBe(false);
  });

  test('an outcome write given up is logged as the outcome, with the error, and counted as lost', async () => {
    const { result } = runWorkflow({
      activities: {
        rememberOutcome: async () => {
          throw new Error('memory store down');
        },
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(fake.logs.filter((l) => l.level === 'error')).toEqual([
      {
        level: 'error',
        message: 'failure memory write given up',
        attrs: { what: 'outcome', error: 'memory store down' },
      },
      {
        level: 'error',
        message: 'failure memory records lost after retrying for an hour',
        attrs: { count: 1 },
      },
    ]);
  });

  test('the outcome of a run stopped after planning is logged as the outcome when its write is given up', async () => {
    const { log, result } = runWorkflow(
      {
        activities: {
          rememberOutcome: async () => {
            throw new Error('memory store down');
          },
        },
      },
      { maxTokens: 10 },
    );
    expect(await result).toMatchObject({
      state: 'FAILED',
      reason: 'budget',
      error: 'token budget exceeded: 15 tokens used, the budget is 10',
    });
    expect(log.memory.map((m) => m.kind)).toEqual(['run']);
    expect(fake.calls.filter((c) => c.name === 'rememberOutcome').map((c) => c.summary)).toEqual([
      'memory · store outcome',
    ]);
    expect(fake.logs.filter((l) => l.level === 'error')).toEqual([
      {
        level: 'error',
        message: 'failure memory write given up',
        attrs: { what: 'outcome', error: 'memory store down' },
      },
      {
        level: 'error',
        message: 'failure memory records lost after retrying for an hour',
        attrs: { count: 1 },
      },
    ]);
  });
});

describe('a turn that fails', () => {
  test('is logged as a warning with its error', async () => {
    const { result } = runWorkflow(
      { step: (turnKey) => (turnKey === 'coder-1' ? { finished: null, progress: false } : {}) },
      { maxIterations: 1, warnAt: 1 },
    );
    const error = 'coder made no progress in 3 steps in a row (only failing calls or no calls)';
    expect(await result).toMatchObject({ error });
    expect(fake.logs.filter((l) => l.message === 'agent turn failed')).toEqual([
      { level: 'warn', message: 'agent turn failed', attrs: { error } },
    ]);
  });
});

describe('the state carried to the next execution', () => {
  /** Runs a first attempt that fails, with continue-as-new suggested; returns what it carried. */
  async function carriedAfterFirstAttempt(): Promise<[RunInput, CarriedState]> {
    const { result } = runWorkflow({
      tests: (attempt) => {
        fake.info.continueAsNewSuggested = true;
        return attempt === 1 ? failingTests : {};
      },
    });
    const err = await result.then(
      () => new Error('the run did not continue as new'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContinuedAsNew);
    return (err as ContinuedAsNew).args as [RunInput, CarriedState];
  }

  test("is the run's work whole, and the last commit made", async () => {
    const [, carried] = await carriedAfterFirstAttempt();
    expect(carried.work).toEqual({
      plan: FINISHES.planner!.tool === 'submit_plan' ? FINISHES.planner!.plan : null,
      testsNeeded: false,
      testPass: 1,
      protectedPaths: [],
      pendingFeedback: [],
      lastCoderSummary: 'wrote a.py',
      failedAttempt: null,
      testSetup: {
        command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
        dependencies: [],
        limits: {},
      },
      baselineRef: null,
      taskRemembered: true,
      extension: null,
      host: { disk: 'disk-1', host: 'host-1', tests: 'tests-1' },
      preparedOn: 'disk-1',
      movable: false,
      acceptanceCommit: null,
      setupCommand: null,
      runCommand: true,
      pendingNotes: [],
    });
    expect(carried.record.headCommit).toBe('c-tester-1');
  });

  test('a state carried by an older build, without the run notes, gives the next Coder none', async () => {
    const [input, carried] = await carriedAfterFirstAttempt();
    delete carried.work.pendingNotes;
    const log = setUpFakeRun({});
    const done = await runOutcome(codingAgentWorkflow(input, carried));
    expect(done).toMatchObject({ state: 'SUCCESS', iterations: 2, error: null });
    expect(log.steps).toEqual(['coder-2#0']);
    expect(Object.keys(log.opens.get('coder-2')!.context)).toEqual([
      'role',
      'task',
      'language',
      'attempt',
      'maxIterations',
      'protectedPaths',
      'baseCommit',
      'plan',
      'analysis',
      'feedback',
      'regressions',
    ]);
  });
});
