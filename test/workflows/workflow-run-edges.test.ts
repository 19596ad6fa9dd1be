/**
 * The edges of a run through the workflow fake (see workflow-run-data.test.ts): how a stopped run
 * ends and what it counts, what the run refuses while it ends, a phase handed a state it cannot
 * work from, tool calls that fail, and what a step of the run's host is given.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { CancelledFailure } from '@temporalio/common';
import type { Transition } from '../../src/shared/types';
import { codingAgentWorkflow, type CarriedState } from '../../src/workflows/coding-agent';
import {
  eventually,
  failingTests,
  fakeRunInput,
  gate,
  setUpFakeRun,
  type FakeRunScript,
} from '../helpers/fake-run';
import { fakePlace, runOutcome } from '../helpers/fake-run';
import { fake, query, signal, update } from '../helpers/workflow-fake';

const moves = (transitions: readonly Transition[]) => transitions.map((t) => `${t.from}>${t.to}`);

function runWorkflow(script: FakeRunScript, ...input: Parameters<typeof fakeRunInput>) {
  const log = setUpFakeRun(script);
  const result = runOutcome(codingAgentWorkflow(fakeRunInput(...input)));
  return { log, result };
}

const finished = () => fake.metrics.filter((m) => m.name === 'aca_runs_finished').map((m) => m.attributes);

describe('a stopped run', () => {
  test('each way of stopping is counted with its state and reason', async () => {
    await runWorkflow({
      step: (turnKey) => {
        if (turnKey === 'coder-1') throw new CancelledFailure('cancelled');
        return {};
      },
    }).result;
    expect(finished()).toEqual([{ state: 'FAILED', reason: 'cancelled' }]);
    await runWorkflow({}, { maxTokens: 1 }).result;
    expect(finished()).toEqual([{ state: 'FAILED', reason: 'budget' }]);
    await runWorkflow({
      activities: {
        runTests: () => {
          throw new Error('boom');
        },
      },
    }).result;
    expect(finished()).toEqual([{ state: 'FAILED', reason: 'error' }]);
    expect(fake.counters).toEqual([
      ['aca_iterations', 'iterations', 'Coding attempts started'],
      ['aca_runs_finished', 'runs', 'Agent runs by end state and reason'],
    ]);
  });

  test('a paused run that is cancelled ends at once, without waiting for a resume', async () => {
    const held = gate();
    const { log, result } = runWorkflow({
      step: async (turnKey) => {
        if (turnKey !== 'coder-1') return {};
        await held.promise;
        throw new CancelledFailure('cancelled');
      },
    });
    await eventually('the Coder step', () => log.steps.includes('coder-1#0'));
    signal('pause');
    held.open();
    const done = await result;
    expect(moves(done.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>PAUSED',
      'PAUSED>FAILED',
    ]);
    expect(done).toMatchObject({ state: 'FAILED', reason: 'cancelled' });
  });

  test('while the run ends it takes no pause and no feedback; a run that ended before planning stores no outcome', async () => {
    const held = gate();
    const { result } = runWorkflow({
      activities: {
        closeRun: async () => {
          await held.promise;
          return { commit: null, files: ['a.py'], changedFiles: [] };
        },
      },
    });
    await eventually('the ending', () => fake.calls.some((c) => c.name === 'closeRun'));
    signal('pause');
    expect(query('state')).toMatchObject({ paused: false });
    expect(() => update('feedback', 'late')).toThrow('the run has already ended (TESTING)');
    held.open();
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(fake.logs.filter((l) => l.message === 'run paused')).toEqual([]);
  });

  test('a run that fails before it has a place lists nothing and gives nothing back', async () => {
    const { log, result } = runWorkflow({
      activities: {
        prepareRun: () => {
          throw new Error('no disk');
        },
      },
    });
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      error: 'no disk',
      files: [],
      changedFiles: [],
    });
    expect(fake.calls.map((c) => c.name)).toEqual(['prepareRun']);
    expect(log.memory).toEqual([]);
    expect(moves(done.transitions)).toEqual(['INIT>FAILED']);
  });

  test('a phase handed a state it cannot work from fails the run with the reason', async () => {
    setUpFakeRun({});
    const carried = {
      machine: { phase: 'REFLECTING', paused: false, transitions: [] },
      record: {
        workflowId: 'wf-1',
        reason: null,
        iterations: 1,
        maxIterations: 3,
        passRate: null,
        tests: { passed: 0, failed: 0, errors: 0 },
        workspace: '/w',
        files: [],
        tokens: { prompt: 0, completion: 0 },
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
        git: null,
        testCommand: null,
      },
      work: {
        plan: null,
        testsNeeded: false,
        testPass: 0,
        protectedPaths: [],
        pendingFeedback: [],
        lastCoderSummary: null,
        failedAttempt: null,
        testSetup: null,
        baselineRef: null,
        taskRemembered: false,
        extension: null,
        host: null,
        preparedOn: null,
        movable: false,
        acceptanceCommit: null,
        setupCommand: null,
      },
    } as unknown as CarriedState;
    const done = await runOutcome(codingAgentWorkflow(fakeRunInput(), carried));
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      error: 'REFLECTING without a failed test run to reflect on',
    });
    expect(moves(done.transitions)).toEqual(['REFLECTING>FAILED']);
  });
});

describe('a run with a repository', () => {
  test('its files are the changed ones that still exist; a run without failing tests or targets at the baseline records none', async () => {
    const { result } = runWorkflow(
      {
        tests: (attempt) => (attempt === 0 ? { failingTests: undefined } : {}),
        activities: {
          closeRun: async () => ({
            commit: null,
            files: null,
            changedFiles: [
              { path: 'a.py', status: 'added', added: 1, removed: 0 },
              { path: 'old.py', status: 'deleted', added: 0, removed: 3 },
            ],
          }),
        },
      },
      {},
      { repo: { path: '/r', baseCommit: 'base' } },
    );
    const done = await result;
    expect(done).toMatchObject({ files: ['a.py'], failingTests: [], targets: [] });
    expect(done.changedFiles).toHaveLength(2);
  });

  test("the baseline's failing tests and targets are the run's until the first attempt", async () => {
    const held = gate();
    const { log, result } = runWorkflow(
      {
        tests: (attempt) =>
          attempt === 0 ? { failingTests: ['t::x'], targets: [{ id: 't::a', outcome: 'failed' }] } : {},
        step: async (turnKey) => {
          if (turnKey === 'planner') await held.promise;
          return {};
        },
      },
      {},
      { repo: { path: '/r', baseCommit: 'base' }, targets: ['t::a'] },
    );
    await eventually('the Planner', () => log.steps.length === 1);
    expect(query('state')).toMatchObject({
      failingTests: ['t::x'],
      targets: [{ id: 't::a', outcome: 'failed' }],
    });
    held.open();
    await result.catch(() => undefined);
  });
});

describe('the steps of a turn', () => {
  test("a tool call is given the turn's conversation, the call's id, the place and the execution", async () => {
    const { result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex === 0
          ? {
              toolCalls: [
                { kind: 'file' as const, id: 'call-9', name: 'read_file' as const, target: 'a.py' },
              ],
            }
          : {},
    });
    await result;
    const call = fake.calls.find((c) => c.name === 'read_file')!;
    expect(call).toEqual({
      name: 'read_file',
      summary: 'coder · read_file a.py',
      args: [
        {
          ref: 'wf-1/first-run/run-1/coder-1',
          toolCallId: 'call-9',
          place: fakePlace('wf-1', '/nonexistent/stub-workspace'),
          headCommit: 'base',
          execution: 'run-1',
        },
      ],
      taskQueue: 'host-1',
    });
  });

  test('a turn whose every tool call fails is given up after 3 steps, whatever the model says of progress', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1'
          ? {
              progress: true,
              toolCalls: [
                { kind: 'file' as const, id: `e${stepIndex}`, name: 'edit_file' as const, target: 'a.py' },
              ],
            }
          : {},
      activities: { edit_file: async () => ({ ok: false, commit: null }) },
    });
    await result;
    expect(log.steps.filter((s) => s.startsWith('coder-1'))).toEqual(['coder-1#0', 'coder-1#1', 'coder-1#2']);
  });

  test('without failure memory the Planner asks for no lessons and nothing is stored', async () => {
    const { log, result } = runWorkflow({}, {}, { failureMemory: false });
    await result;
    expect(log.opens.get('planner')).not.toHaveProperty('recallLessons');
    expect(fake.calls.find((c) => c.name === 'openTurn')!.summary).toBe('planner · open the turn');
    expect(log.memory).toEqual([]);
  });

  test('a long summary is cut for the commit message and the fix; the warning comes at warnAt only', async () => {
    const long = 'x'.repeat(700);
    const { log, result } = runWorkflow(
      {
        tests: (attempt) => (attempt < 2 ? failingTests : {}),
        step: (turnKey) =>
          turnKey.startsWith('coder') ? { finished: { tool: 'finish', summary: `  ${long}  ` } } : {},
      },
      { maxIterations: 3, warnAt: 2 },
    );
    const done = await result;
    const firstCommit = fake.calls.find((c) => c.name === 'commitTurn');
    expect((firstCommit!.args[0] as { message: string }).message).toBe(
      `aca: attempt 1, coder: ${'x'.repeat(120)}`,
    );
    expect((log.memory.at(-1)!.input as { fix: { summary: string } }).fix.summary).toBe(
      `Attempt 2 passed after: ${'x'.repeat(500)} The analysis that led to it: add one`,
    );
    expect(done.warning).toBe('iteration 2 of 3: 1 attempts left before the run fails');
    expect(fake.logs.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      'iteration 2 of 3: 1 attempts left before the run fails',
    ]);
  });

  test('a failed attempt stores its errors as failures, and the Reflector is told the targets', async () => {
    const { log, result } = runWorkflow(
      {
        tests: (attempt) =>
          attempt === 1
            ? {
                passed: 1,
                failed: 1,
                errors: 2,
                success: false,
                targets: [{ id: 't::a', outcome: 'failed' }],
              }
            : { targets: [{ id: 't::a', outcome: 'passed' }] },
      },
      {},
      { repo: { path: '/r', baseCommit: 'base' }, targets: ['t::a'] },
    );
    await result;
    expect(log.memory[1]).toEqual({
      kind: 'attempt',
      input: {
        workflowId: 'wf-1',
        iteration: 1,
        passRate: 0.5,
        passed: 1,
        failed: 3,
        reportRef: 'report-1',
        analysis: {
          rootCause: 'off by one',
          fixHypothesis: 'add one',
          filesToChange: ['a.py'],
          testsWrong: false,
        },
        analysisError: null,
      },
    });
    expect(fake.calls.find((c) => c.name === 'rememberAttempt')!.summary).toBe(
      'memory · store failure of attempt 1',
    );
    expect(log.opens.get('reflector-1')!.context).toMatchObject({
      targets: [{ id: 't::a', outcome: 'failed' }],
    });
  });
});

describe('the end of a run', () => {
  test('a run paused during its last Reflector step at the limit ends only once resumed', async () => {
    const held = gate();
    const { log, result } = runWorkflow(
      {
        tests: () => failingTests,
        step: async (turnKey) => {
          if (turnKey === 'reflector-1') await held.promise;
          return {};
        },
      },
      { maxIterations: 1 },
    );
    await eventually('the Reflector step', () => log.steps.includes('reflector-1#0'));
    signal('pause');
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(query('state')).toMatchObject({ state: 'PAUSED' });
    signal('resume');
    const done = await result;
    expect(moves(done.transitions).slice(-3)).toEqual([
      'REFLECTING>PAUSED',
      'PAUSED>REFLECTING',
      'REFLECTING>FAILED',
    ]);
  });

  test('success after an attempt without an analysis or a Coder summary; no error logged when nothing was lost', async () => {
    const { log, result } = runWorkflow({
      tests: (attempt) => (attempt === 1 ? failingTests : {}),
      step: (turnKey) =>
        turnKey.startsWith('coder') || turnKey === 'reflector-1' ? { progress: false, toolCalls: [] } : {},
    });
    const done = await result;
    expect(done).toMatchObject({ state: 'SUCCESS', iterations: 2, lastAnalysis: null });
    expect((log.memory.at(-1)!.input as { fix: unknown }).fix).toEqual({
      iteration: 2,
      summary: 'Attempt 2 passed.',
    });
    expect(fake.logs.filter((l) => l.level === 'error')).toEqual([]);
  });
});
