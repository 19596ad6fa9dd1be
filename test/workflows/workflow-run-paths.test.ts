/**
 * The run's other paths through the workflow fake (see workflow-run-data.test.ts): waiting at
 * the limit, continue-as-new, `--repo` runs and their baseline, the setup command, a host that
 * is gone, the Planner's targets, linked runs and turns that end badly, each pinned on the data
 * it leaves.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { ActivityFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import type { RunInput, RunResult } from '../../src/shared/run-types';
import type { Plan, Transition } from '../../src/shared/types';
import { codingAgentWorkflow, type CarriedState } from '../../src/workflows/coding-agent';
import { describeFailure } from '../../src/workflows/describe-failure';
import { MemoryQueue } from '../../src/workflows/memory-queue';
import {
  eventually,
  failingTests,
  fakeRunInput,
  FINISHES,
  gate,
  setUpFakeRun,
  type FakeRunScript,
} from '../helpers/fake-run';
import { committedBy, fakePlace, runOutcome } from '../helpers/fake-run';
import { ContinuedAsNew, fake, query, update } from '../helpers/workflow-fake';

const moves = (transitions: readonly Transition[]) => transitions.map((t) => `${t.from}>${t.to}`);

function runWorkflow(script: FakeRunScript = {}, ...input: Parameters<typeof fakeRunInput>) {
  const log = setUpFakeRun(script);
  const result = runOutcome(codingAgentWorkflow(fakeRunInput(...input)));
  return { log, result };
}

const analysis = FINISHES.reflector!.tool === 'submit_analysis' ? FINISHES.reflector!.analysis : null;
const repo = { path: '/home/u/project', baseCommit: 'base' };

describe('--on-limit ask', () => {
  test('the run waits at its limit, listed WAITING; extend gives it more attempts and feedback for the next Coder', async () => {
    const { log, result } = runWorkflow(
      { tests: (attempt) => (attempt === 1 ? failingTests : {}) },
      { maxIterations: 1, warnAt: 1, onLimit: 'ask' },
    );
    await eventually(
      'the wait at the limit',
      () => (query('state') as RunResult & { waiting: string }).waiting === 'limit',
    );
    expect(fake.searchAttributes.at(-1)!.map((a) => [a.key.name, a.value])).toEqual([
      ['AgentState', 'WAITING'],
      ['AgentIteration', 1],
      ['AgentPassRate', 0.5],
      ['AgentLanguage', 'python'],
    ]);
    expect(fake.details.at(-1)).toContain(
      '_Waiting at the iteration limit: `aca extend wf-1 --iterations N` gives it N more attempts._',
    );
    expect(() => update('extend', { iterations: 0 })).toThrow(
      'iterations must be a whole number from 1 to 1000',
    );
    expect(() => update('extend', { iterations: 1001 })).toThrow(
      'iterations must be a whole number from 1 to 1000',
    );
    expect(() => update('extend', { iterations: 1.5 })).toThrow(
      'iterations must be a whole number from 1 to 1000',
    );
    expect(() => update('extend', { iterations: '2' })).toThrow(
      'iterations must be a whole number from 1 to 1000',
    );
    expect(() => update('extend', { iterations: 2, feedback: ' ' })).toThrow('feedback text is empty');
    expect(update('extend', { iterations: 1000, feedback: ' use ints ' })).toEqual({ maxIterations: 1001 });
    expect(() => update('extend', { iterations: 1 })).toThrow(
      'the run is not waiting at its iteration limit',
    );
    const done = await result;
    expect(done).toMatchObject({ state: 'SUCCESS', iterations: 2, maxIterations: 1001, warning: null });
    expect((log.opens.get('coder-2')!.context as { feedback: string[] }).feedback).toEqual(['use ints']);
    expect(moves(done.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
      'CODING>TESTING',
      'TESTING>SUCCESS',
    ]);
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'attempt', 'outcome']);
  });

  test('an extend of exactly one attempt, and one without feedback, is taken', async () => {
    const { result } = runWorkflow(
      { tests: (attempt) => (attempt === 1 ? failingTests : {}) },
      { maxIterations: 1, onLimit: 'ask' },
    );
    await eventually('the wait', () => (query('state') as { waiting: string }).waiting === 'limit');
    expect(update('extend', { iterations: 1 })).toEqual({ maxIterations: 2 });
    expect(await result).toMatchObject({ state: 'SUCCESS', maxIterations: 2 });
  });

  test('a wait nobody answers ends FAILED max_iterations when its timer fires', async () => {
    const { result } = runWorkflow(
      { tests: () => failingTests },
      { maxIterations: 1, onLimit: 'ask', askTimeoutMs: 30 },
    );
    const done = await result;
    expect(done).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 1 });
    expect(moves(done.transitions).at(-1)).toBe('REFLECTING>FAILED');
    expect(fake.searchAttributes.at(-1)![0]!.value).toBe('FAILED');
  });

  test('extend is refused by a run that is not waiting', async () => {
    const held = gate();
    const { log, result } = runWorkflow({
      step: async () => {
        await held.promise;
        return {};
      },
    });
    await eventually('the Planner', () => log.steps.length === 1);
    expect(() => update('extend', { iterations: 2 })).toThrow(
      'the run is not waiting at its iteration limit',
    );
    expect(() => update('feedback', '')).toThrow('feedback text is empty');
    expect(() => update('feedback', 5)).toThrow('feedback text is empty');
    expect(() => update('feedback', 'x'.repeat(4001))).toThrow('feedback is longer than 4000 characters');
    expect(update('feedback', 'x'.repeat(4000))).toEqual({ accepted: true, pending: 1 });
    held.open();
    await result;
  });
});

describe('continue-as-new', () => {
  test('between attempts, when suggested: the state carried whole, then picked up where it was', async () => {
    const { result } = runWorkflow(
      {
        tests: (attempt) => {
          // The server suggests it once the first attempt has run.
          fake.info.continueAsNewSuggested = true;
          return attempt === 1 ? failingTests : {};
        },
      },
      {},
      {},
    );
    let carried: CarriedState | undefined;
    let input: RunInput | undefined;
    try {
      await result;
      throw new Error('the run did not continue as new');
    } catch (err) {
      expect(err).toBeInstanceOf(ContinuedAsNew);
      [input, carried] = (err as ContinuedAsNew).args as [RunInput, CarriedState];
    }
    expect(input).toEqual(fakeRunInput());
    expect(moves(carried!.machine.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
    ]);
    expect(carried!.machine).toMatchObject({ phase: 'CODING', paused: false });
    expect(carried!.record).toMatchObject({ iterations: 1, lastAnalysis: analysis });
    expect(fake.logs.find((l) => l.message === 'continuing as new')!.attrs).toEqual({
      nextIteration: 2,
      historyLength: 10,
    });
    const log = setUpFakeRun({});
    const done = await runOutcome(codingAgentWorkflow(input!, carried));
    expect(moves(done.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
      'CODING>TESTING',
      'TESTING>SUCCESS',
    ]);
    expect(done).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(log.steps).toEqual(['coder-2#0']);
  });

  test('an execution makes one attempt before it may continue as new', async () => {
    const { result } = runWorkflow({}, {}, {});
    fake.info.continueAsNewSuggested = true;
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 1 });
  });

  test('a run handed an ended state refuses to run it', async () => {
    setUpFakeRun({});
    const carried = {
      machine: { phase: 'SUCCESS', paused: false, transitions: [] },
      record: baseRecord(),
      work: baseWork(),
    } as unknown as CarriedState;
    await expect(codingAgentWorkflow(fakeRunInput(), carried)).rejects.toMatchObject({
      type: 'ForbiddenStateMove',
      message: 'the run has already ended SUCCESS',
    });
  });
});

function baseRecord() {
  return {
    workflowId: 'wf-1',
    reason: null,
    iterations: 0,
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
    branch: 'aca/wf-1',
    baseCommit: 'base',
    headCommit: 'base',
    changedFiles: [],
    baseline: null,
    regressions: [],
    targets: [],
    failingTests: [],
    unknownTargets: [],
    attempts: [],
    cost: null,
    parentRun: null,
    place: fakePlace('wf-1', '/w'),
    testCommand: 'pytest',
  };
}

function baseWork() {
  return {
    plan: null,
    testsNeeded: true,
    testPass: 0,
    protectedPaths: [],
    pendingFeedback: [],
    lastCoderSummary: null,
    failedAttempt: null,
    testSetup: null,
    baselineRef: null,
    taskRemembered: true,
    extension: null,
    host: { disk: 'disk-1', host: 'host-1', tests: 'tests-1' },
    preparedOn: 'disk-1',
    movable: false,
    acceptanceCommit: null,
    setupCommand: null,
  };
}

describe('a --repo run and its baseline', () => {
  test('the baseline is run at attempt 0 and recorded; regressions and failing tests of each attempt too', async () => {
    const { log, result } = runWorkflow(
      {
        tests: (attempt) =>
          attempt === 0
            ? { passed: 3, failed: 1, errors: 1, failingTests: ['t::x'] }
            : attempt === 1
              ? {
                  passed: 3,
                  failed: 2,
                  success: false,
                  regressions: ['t::y'],
                  failingTests: ['t::x', 't::y'],
                  sandboxWarning: 'no network isolation',
                }
              : { passed: 4, failed: 1, success: true, failingTests: ['t::x'] },
      },
      {},
      { repo, testCommand: 'pytest -q' },
    );
    const done = await result;
    expect(done).toMatchObject({
      state: 'SUCCESS',
      repo: '/home/u/project',
      baseline: { passed: 3, failed: 2 },
      regressions: [],
      failingTests: ['t::x'],
      tests: { passed: 4, failed: 1, errors: 0 },
      passRate: 0.8,
      warning: 'no network isolation',
      // A --repo run lists what it changed, not the repository's files.
      files: ['a.py'],
    });
    expect(fake.calls.find((c) => c.name === 'closeRun')!.args[0]).toMatchObject({ listFiles: false });
    expect(
      fake.calls
        .filter((c) => c.name === 'runTests')
        .map((c) => [c.summary, (c.args[0] as { attempt: number; baselineRef?: string }).baselineRef]),
    ).toEqual([
      ['tester · baseline: pytest', undefined],
      ['tester · run tests (attempt 1)', 'report-0'],
      ['tester · run tests (attempt 2)', 'report-0'],
    ]);
    expect(log.opens.get('coder-2')!.context).toMatchObject({ regressions: ['t::y'], testCommand: 'pytest' });
    expect(log.memory[1]!.input).toMatchObject({ iteration: 1, passed: 3, failed: 2, reportRef: 'report-1' });
    expect(fake.calls[0]!.summary).toBe('git · worktree of /home/u/project');
  });

  test('a baseline that cannot run stops the run before the Planner, reason environment, nothing remembered', async () => {
    const { log, result } = runWorkflow(
      { tests: () => ({ cannotRun: 'pytest is not installed' }) },
      {},
      { repo },
    );
    const done = await result;
    expect(done).toMatchObject({ state: 'FAILED', reason: 'environment', error: 'pytest is not installed' });
    expect(moves(done.transitions)).toEqual(['INIT>FAILED']);
    expect(log.steps).toEqual([]);
    expect(log.memory).toEqual([]);
  });

  test('targets no test of the base commit has end the run before any model call; one that did not complete does not', async () => {
    const { log, result } = runWorkflow(
      { tests: () => ({ passed: 2, failed: 1, errors: 1, unknownTargets: ['t::nope', 't::gone'] }) },
      {},
      { repo, targets: ['t::nope', 't::gone'] },
    );
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      unknownTargets: ['t::nope', 't::gone'],
      error:
        'no such test: t::nope, t::gone (a target must name a test or test file that exists at the base commit; 4 tests ran there)',
    });
    expect(log.steps).toEqual([]);
    const other = runWorkflow(
      { tests: (attempt) => (attempt === 0 ? { outcome: 'timeout', unknownTargets: ['t::nope'] } : {}) },
      {},
      { repo, targets: ['t::nope'] },
    );
    const went = await other.result;
    expect(went.unknownTargets).toEqual([]);
    expect(other.log.steps.length).toBeGreaterThan(0);
  });

  test('targets are judged by every test run, and a passing run with a target failing does not succeed', async () => {
    const { result } = runWorkflow(
      {
        tests: (attempt) => ({
          targets: [{ id: 't::a', outcome: attempt === 2 ? 'passed' : 'failed' }],
        }),
      },
      {},
      { repo, targets: ['t::a'] },
    );
    const done = await result;
    expect(done).toMatchObject({
      state: 'SUCCESS',
      iterations: 2,
      targets: [{ id: 't::a', outcome: 'passed' }],
    });
    expect(
      fake.calls
        .filter((c) => c.name === 'runTests')
        .map((c) => (c.args[0] as { targets?: string[] }).targets),
    ).toEqual([['t::a'], ['t::a'], ['t::a']]);
  });

  test('a run linked to an earlier one reuses its baseline, plan, analysis and attempts', async () => {
    const plan = { summary: 'old plan', steps: ['s'], files: ['b.py'] };
    const link = {
      kind: 'retry' as const,
      parentRun: 'parent',
      parentTask: 'old task',
      startCommit: 'start',
      parentPlace: fakePlace('parent', '/pw', 'disk-1', '/pg'),
      baseCommit: 'base',
      plan,
      analysis,
      attemptsBefore: 2,
      done: 'did things',
      baseline: { ref: 'report-old', summary: { passed: 7, failed: 1 } },
      feedback: 'try harder',
    };
    const { log, result } = runWorkflow({}, { maxIterations: 5 }, { repo, link });
    const done = await result;
    expect(done).toMatchObject({
      state: 'SUCCESS',
      iterations: 3,
      parentRun: 'parent',
      baseline: { passed: 7, failed: 1 },
    });
    // No new plan, no Tester: the retry goes on with the plan and tests it has.
    expect(log.steps).toEqual(['coder-3#0']);
    expect(log.opens.get('coder-3')!.context).toMatchObject({
      plan,
      analysis,
      feedback: ['try harder'],
      attempt: 3,
    });
    expect(
      fake.calls
        .filter((c) => c.name === 'runTests')
        .map((c) => (c.args[0] as { baselineRef: string }).baselineRef),
    ).toEqual(['report-old']);
    expect(fake.calls[0]!.args[0]).toMatchObject({
      start: { commit: 'start', baseCommit: 'base', parentPlace: link.parentPlace, parentRun: 'parent' },
    });
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'outcome']);
    expect(log.memory[1]!.input).toMatchObject({
      fix: {
        iteration: 3,
        summary: 'Attempt 3 passed after: wrote a.py The analysis that led to it: add one',
      },
    });
  });

  test('a continued run plans anew and its agents see the earlier run', async () => {
    const link = {
      kind: 'continue' as const,
      parentRun: 'parent',
      parentTask: 'old task',
      startCommit: 'start',
      parentPlace: fakePlace('parent', '/pw', 'disk-1', '/pg'),
      baseCommit: 'base',
      plan: { summary: 'old plan', steps: ['s'], files: ['b.py'] },
      analysis: null,
      attemptsBefore: 0,
      done: 'did things',
      baseline: null,
      feedback: null,
    };
    const { log, result } = runWorkflow({}, {}, { link });
    await result;
    expect(log.steps).toEqual(['planner#0', 'coder-1#0', 'tester-1#0']);
    expect(log.opens.get('planner')!.context).toMatchObject({
      earlier: { run: 'parent', task: 'old task', done: 'did things' },
    });
    expect(log.opens.get('coder-1')!.context).toMatchObject({
      feedback: [],
      plan: FINISHES.planner!.tool === 'submit_plan' ? FINISHES.planner!.plan : null,
    });
  });
});

describe('the setup command', () => {
  test('runs once, before the baseline, and its commit is where the run goes on from', async () => {
    const { result } = runWorkflow(
      {
        activities: {
          runSetup: async () => ({
            ok: true,
            outcome: 'completed',
            message: null,
            outputTail: '',
            commit: 'setup-commit',
          }),
        },
      },
      {},
      { repo, setupCommand: 'pip install -e .' },
    );
    await result;
    const setup = fake.calls.find((c) => c.name === 'runSetup')!;
    expect(setup.summary).toBe('setup · pip install -e .');
    expect(setup.args[0]).toMatchObject({
      command: 'pip install -e .',
      commitMessage: 'aca: setup command output',
      network: false,
    });
    expect(
      (fake.calls.find((c) => c.name === 'runTests')!.args[0] as { headCommit: string }).headCommit,
    ).toBe('setup-commit');
  });

  test('a failed setup command without a message names its outcome alone', async () => {
    const { result } = runWorkflow(
      {
        activities: {
          runSetup: async () => ({ ok: false, outcome: 'timeout', message: null, outputTail: 'slow' }),
        },
      },
      {},
      { setupCommand: 'make' },
    );
    expect(await result).toMatchObject({
      state: 'FAILED',
      error: 'the setup command "make" failed (timeout); last output:\nslow',
    });
  });

  test('a failed setup command ends the run with its outcome and output, before the Planner', async () => {
    const { log, result } = runWorkflow(
      {
        activities: {
          runSetup: async () => ({
            ok: false,
            outcome: 'exit',
            message: 'exit 1',
            outputTail: 'no such package',
          }),
        },
      },
      {},
      { setupCommand: 'pip install nope' },
    );
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      error: 'the setup command "pip install nope" failed (exit: exit 1); last output:\nno such package',
    });
    expect(log.steps).toEqual([]);
    expect(log.memory).toEqual([]);
  });
});

describe('a host that is gone', () => {
  const startTimeout = () =>
    new ActivityFailure(
      'timed out',
      'x',
      '1',
      RetryState.TIMEOUT,
      'stub',
      new TimeoutFailure('start', undefined, TimeoutType.SCHEDULE_TO_START),
    );

  test('a run that can move is adopted by another host at its recorded commit; its setup runs again there', async () => {
    let gone = true;
    const { result } = runWorkflow(
      {
        prepared: { movable: true },
        activities: {
          runSetup: async () => ({
            ok: true,
            outcome: 'completed',
            message: null,
            outputTail: '',
            commit: null,
          }),
          prepareWorkspace: async () => {
            if (gone) throw startTimeout();
            return { protectedPaths: [], commit: null };
          },
          adoptRun: async () => {
            gone = false;
            return {
              place: fakePlace('wf-1', '/w2', 'disk-2', '/g2'),
              queues: { disk: 'disk-2', host: 'host-2', tests: 'tests-2' },
            };
          },
        },
      },
      { hostStartTimeoutMs: 1234 },
      { setupCommand: 'make' },
    );
    const done = await result;
    expect(done).toMatchObject({ state: 'SUCCESS', workspace: '/w2', place: { workTree: '/w2' } });
    expect(fake.calls.map((c) => `${c.name}@${c.taskQueue ?? ''}`).slice(0, 6)).toEqual([
      'prepareRun@',
      'runSetup@tests-1',
      'prepareWorkspace@host-1',
      'adoptRun@',
      'runSetup@tests-2',
      'prepareWorkspace@host-2',
    ]);
    expect(fake.calls[3]!.summary).toBe('host · adopt the run from the git store (host-1 took no step)');
    expect(fake.calls[3]!.args[0]).toEqual({
      place: fakePlace('wf-1', '/nonexistent/stub-workspace'),
      headCommit: 'base',
    });
    expect(fake.calls[4]!.summary).toBe('setup · make (adopted run)');
    const hostProxies = fake.proxies.filter((p) => p.taskQueue === 'host-1' || p.taskQueue === 'tests-1');
    expect(new Set(hostProxies.map((p) => p.scheduleToStartTimeout))).toEqual(new Set([1234]));
    expect(fake.logs.find((l) => l.message === 'the run moved to another host')!.attrs).toEqual({
      from: 'host-1',
      to: 'host-2',
    });
    // The acceptance tests are read from their commit on a host other than the one that prepared the run.
    expect(
      (fake.calls.find((c) => c.name === 'runTests')!.args[0] as { acceptanceCommit: unknown })
        .acceptanceCommit,
    ).toBeNull();
  });

  test('a busy test queue of a live host is waited for, not moved from', async () => {
    let tries = 0;
    const { result } = runWorkflow({
      prepared: { movable: true, hostStartTimeoutMs: 999 },
      activities: {
        runTests: async () => {
          tries += 1;
          if (tries === 1) throw startTimeout();
          return {
            outcome: 'completed',
            passed: 1,
            failed: 0,
            errors: 0,
            passRate: 1,
            reportRef: 'r',
            success: true,
            regressions: [],
          };
        },
        hostAlive: async () => 'alive',
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(
      fake.calls.filter((c) => ['runTests', 'hostAlive', 'adoptRun'].includes(c.name)).map((c) => c.name),
    ).toEqual(['runTests', 'hostAlive', 'runTests']);
    expect(
      fake.proxies.filter((p) => p.taskQueue === 'host-1').map((p) => p.scheduleToStartTimeout),
    ).toContain(999);
  });

  test('a run that cannot move takes no start timeout; other failures are not moves', async () => {
    const { result } = runWorkflow({
      activities: {
        prepareWorkspace: async () => {
          throw new Error('disk on fire');
        },
      },
    });
    const done = await result;
    expect(done).toMatchObject({ state: 'FAILED', reason: 'error', error: 'disk on fire' });
    expect(fake.proxies.filter((p) => p.taskQueue).every((p) => !('scheduleToStartTimeout' in p))).toBe(true);
    expect(fake.calls.some((c) => c.name === 'adoptRun')).toBe(false);
  });
});

describe('a host that is gone: moves, the adopted setup, what is not a move', () => {
  const timeout = (type: TimeoutType) =>
    new ActivityFailure(
      'timed out',
      'x',
      '1',
      RetryState.TIMEOUT,
      'stub',
      new TimeoutFailure('timed out', undefined, type),
    );
  const startTimeout = () => timeout(TimeoutType.SCHEDULE_TO_START);
  const queueNow = () => fake.calls.at(-1)!.taskQueue;
  const adoptions = (hosts: string[]) => {
    let next = 0;
    return async () => {
      const host = hosts[next++]!;
      return {
        place: fakePlace('wf-1', `/w-${host}`, `disk-${host}`, `/g-${host}`),
        queues: { disk: `disk-${host}`, host: `host-${host}`, tests: `tests-${host}` },
      };
    };
  };
  const setupOk = { ok: true, outcome: 'completed', message: null, outputTail: '', commit: null };

  test('a run moves again when its second host is gone; the adopted setup gets the run and its failure is logged', async () => {
    const command = `make ${'x'.repeat(100)}`;
    const { result } = runWorkflow(
      {
        prepared: { movable: true },
        activities: {
          prepareWorkspace: async () => {
            if (queueNow() === 'host-1') throw startTimeout();
            return { protectedPaths: ['tests/test_a.py'], commit: 'acc' };
          },
          runSetup: async () =>
            queueNow() === 'tests-2'
              ? { ok: false, outcome: 'exit', message: 'exit 2', outputTail: 'boom', commit: null }
              : setupOk,
          runTests: async () => {
            if (queueNow() === 'tests-2') throw startTimeout();
            return {
              outcome: 'completed',
              passed: 1,
              failed: 0,
              errors: 0,
              passRate: 1,
              reportRef: 'r',
              success: true,
              regressions: [],
            };
          },
          hostAlive: async () => {
            throw startTimeout();
          },
          adoptRun: adoptions(['2', '3']),
        },
      },
      {},
      { setupCommand: command },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', workspace: '/w-3' });
    const onQueues = fake.calls
      .filter((c) => ['runSetup', 'prepareWorkspace', 'adoptRun', 'runTests', 'hostAlive'].includes(c.name))
      .map((c) => `${c.name}@${c.taskQueue ?? ''}`);
    expect(onQueues).toEqual([
      'runSetup@tests-1',
      'prepareWorkspace@host-1',
      'adoptRun@',
      'runSetup@tests-2',
      'prepareWorkspace@host-2',
      'runTests@tests-2',
      'hostAlive@host-2',
      'adoptRun@',
      'runSetup@tests-3',
      'runTests@tests-3',
    ]);
    expect(fake.calls.find((c) => c.name === 'runSetup')!.summary).toBe(`setup · ${command.slice(0, 80)}`);
    const adopted = fake.calls.find((c) => c.name === 'runSetup' && c.taskQueue === 'tests-2')!;
    expect(adopted.summary).toBe(`setup · ${command.slice(0, 80)} (adopted run)`);
    expect(adopted.args).toEqual([
      {
        language: 'python',
        command,
        setup: {
          command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
          dependencies: [],
          limits: {},
        },
        network: false,
        place: fakePlace('wf-1', '/w-2', 'disk-2', '/g-2'),
        headCommit: 'base',
        execution: fake.info.runId,
      },
    ]);
    const alive = fake.calls.find((c) => c.name === 'hostAlive')!;
    expect([alive.summary, alive.args]).toEqual(["host · is the run's host alive?", []]);
    expect(fake.logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.attrs])).toEqual([
      ['the run moved to another host', { from: 'host-1', to: 'host-2' }],
      ['the setup command failed on the adopting host', { outcome: 'exit' }],
      ['the run moved to another host', { from: 'host-2', to: 'host-3' }],
    ]);
    // Read on a host other than the one that prepared the run: the acceptance tests come from their commit.
    expect(
      fake.calls
        .filter((c) => c.name === 'runTests')
        .map((c) => (c.args[0] as { acceptanceCommit: unknown }).acceptanceCommit),
    ).toEqual(['acc', 'acc']);
  });

  test('a host that gives no start timeout of its own leaves the default', async () => {
    const { result } = runWorkflow({ prepared: { movable: true, hostStartTimeoutMs: 0 } });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(
      new Set(fake.proxies.filter((p) => p.taskQueue === 'host-1').map((p) => p.scheduleToStartTimeout)),
    ).toEqual(new Set([60_000]));
  });

  test("the preparing host's heartbeat timeout is every later heartbeating step's", async () => {
    const { result } = runWorkflow({ prepared: { heartbeatTimeoutMs: 3_000 } });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    const timeouts = fake.proxies.map((p) => p.heartbeatTimeout);
    // prepareRun itself goes out before any host has said: each group's own.
    expect(timeouts.slice(0, 4)).toEqual(['20s', '8s', undefined, '30s']);
    expect(new Set(timeouts.slice(4))).toEqual(new Set([3_000, undefined]));
    const later = fake.proxies.slice(4);
    for (const queue of [undefined, 'host-1', 'tests-1'])
      expect(later.some((p) => p.taskQueue === queue && p.heartbeatTimeout === 3_000)).toBe(true);
  });

  test('a busy test queue at the baseline is waited for, not moved from', async () => {
    let busy = true;
    const { result } = runWorkflow(
      {
        prepared: { movable: true },
        activities: {
          runTests: async (input: { attempt: number }) => {
            if (input.attempt === 0 && busy) {
              busy = false;
              throw startTimeout();
            }
            return {
              outcome: 'completed',
              passed: 1,
              failed: 0,
              errors: 0,
              passRate: 1,
              reportRef: `report-${input.attempt}`,
              success: true,
              regressions: [],
            };
          },
          hostAlive: async () => 'alive',
          adoptRun: adoptions(['2']),
        },
      },
      {},
      { repo },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', baseline: { passed: 1, failed: 0 } });
    expect(
      fake.calls
        .filter((c) => ['runTests', 'hostAlive', 'adoptRun'].includes(c.name))
        .map((c) => `${c.name}@${c.taskQueue ?? ''}`),
    ).toEqual(['runTests@tests-1', 'hostAlive@host-1', 'runTests@tests-1', 'runTests@tests-1']);
  });

  test('a run that stays on its host reads its acceptance tests from its disk', async () => {
    const { result } = runWorkflow({
      prepared: { movable: true },
      activities: { prepareWorkspace: async () => ({ protectedPaths: ['tests/test_a.py'], commit: 'acc' }) },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(
      fake.calls
        .filter((c) => c.name === 'runTests')
        .map((c) => (c.args[0] as { acceptanceCommit: unknown }).acceptanceCommit),
    ).toEqual([null]);
  });

  test('a run without a setup command runs none on the host that adopts it', async () => {
    const { result } = runWorkflow({
      prepared: { movable: true },
      activities: {
        prepareWorkspace: async () => {
          if (queueNow() === 'host-1') throw startTimeout();
          return { protectedPaths: [], commit: null };
        },
        adoptRun: adoptions(['2']),
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS', workspace: '/w-2' });
    expect(fake.calls.filter((c) => ['runSetup', 'adoptRun'].includes(c.name)).map((c) => c.name)).toEqual([
      'adoptRun',
    ]);
  });

  test('a host gone during the setup step itself: the retried step runs the setup once on the new host', async () => {
    const { result } = runWorkflow(
      {
        prepared: { movable: true },
        activities: {
          runSetup: async () => {
            if (queueNow() === 'tests-1') throw startTimeout();
            return setupOk;
          },
          hostAlive: async () => {
            throw startTimeout();
          },
          adoptRun: adoptions(['2']),
        },
      },
      {},
      { setupCommand: 'make' },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(
      fake.calls
        .filter((c) => ['runSetup', 'hostAlive', 'adoptRun'].includes(c.name))
        .map((c) => `${c.name}@${c.taskQueue ?? ''}`),
    ).toEqual(['runSetup@tests-1', 'hostAlive@host-1', 'adoptRun@', 'runSetup@tests-2']);
    expect(fake.calls.find((c) => c.taskQueue === 'tests-2')!.summary).toBe('setup · make');
  });

  test('an adopted setup step whose queue is only busy is waited for, not moved from again', async () => {
    let busy = true;
    const { result } = runWorkflow(
      {
        prepared: { movable: true },
        activities: {
          prepareWorkspace: async () => {
            if (queueNow() === 'host-1') throw startTimeout();
            return { protectedPaths: [], commit: null };
          },
          runSetup: async () => {
            if (queueNow() === 'tests-2' && busy) {
              busy = false;
              throw startTimeout();
            }
            return setupOk;
          },
          hostAlive: async () => 'alive',
          adoptRun: adoptions(['2', '3']),
        },
      },
      {},
      { setupCommand: 'make' },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', workspace: '/w-2' });
    expect(
      fake.calls
        .filter((c) => ['runSetup', 'hostAlive', 'adoptRun'].includes(c.name))
        .map((c) => `${c.name}@${c.taskQueue ?? ''}`),
    ).toEqual(['runSetup@tests-1', 'adoptRun@', 'runSetup@tests-2', 'hostAlive@host-2', 'runSetup@tests-2']);
  });

  test.each([
    ['a step that timed out while running', () => timeout(TimeoutType.START_TO_CLOSE), 'timed out'],
    ['a step that failed', () => new Error('disk on fire'), 'disk on fire'],
  ])('%s is no move: the run fails with its error', async (_what, failure, error) => {
    const { result } = runWorkflow({
      prepared: { movable: true },
      activities: {
        prepareWorkspace: async () => {
          throw failure();
        },
        adoptRun: adoptions(['2']),
      },
    });
    expect(await result).toMatchObject({ state: 'FAILED', reason: 'error', error });
    expect(fake.calls.some((c) => c.name === 'adoptRun')).toBe(false);
  });

  test('a host probe that fails otherwise than by its start timeout fails the run, which does not move', async () => {
    const { result } = runWorkflow({
      prepared: { movable: true },
      activities: {
        runTests: async () => {
          throw startTimeout();
        },
        hostAlive: async () => {
          throw new Error('probe broke');
        },
        adoptRun: adoptions(['2']),
      },
    });
    expect(await result).toMatchObject({ state: 'FAILED', reason: 'error', error: 'probe broke' });
    expect(fake.calls.some((c) => c.name === 'adoptRun')).toBe(false);
  });
});

describe('the record a run starts from', () => {
  const linked = (kind: 'retry' | 'continue', attemptsBefore: number, plan: Plan | null) => ({
    kind,
    parentRun: 'parent',
    parentTask: 'old task',
    startCommit: 'start',
    parentPlace: fakePlace('parent', '/pw', 'disk-1', '/pg'),
    baseCommit: 'base',
    plan,
    analysis: null,
    attemptsBefore,
    done: 'did things',
    baseline: null,
    feedback: null,
  });
  const targetsTested = () =>
    fake.calls.filter((c) => c.name === 'runTests').map((c) => (c.args[0] as { targets?: string[] }).targets);

  test("a continued run drops its parent's plan and targets, and writes tests anew", async () => {
    const plan = { summary: 'old plan', steps: ['s'], files: ['b.py'], targets: ['t::p'] };
    const { log, result } = runWorkflow({}, { maxIterations: 5 }, { link: linked('continue', 2, plan) });
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 3, targets: [] });
    expect(log.steps).toEqual(['planner#0', 'coder-3#0', 'tester-1#0']);
    // No targets: the test step is given none to judge.
    expect(targetsTested()).toEqual([undefined]);
  });

  test("a retry from before any attempt keeps its parent's plan and targets and still writes tests", async () => {
    const plan = { summary: 'old plan', steps: ['s'], files: ['b.py'], targets: ['t::p'] };
    const { log, result } = runWorkflow({}, {}, { link: linked('retry', 0, plan) });
    // The fake's test runs never report t::p, so every attempt fails on it.
    // Its last attempt is attempt 3, the warnAt of the fake's input, but the run's last: no warning.
    expect(await result).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      warning: null,
      targets: [{ id: 't::p', outcome: 'missing' }],
    });
    expect(log.steps).toEqual([
      'coder-1#0',
      'tester-1#0',
      'reflector-1#0',
      'coder-2#0',
      'reflector-2#0',
      'coder-3#0',
      'reflector-3#0',
    ]);
    expect(log.opens.get('coder-1')!.context).toMatchObject({ plan });
    // No Planner's turn: none is opened.
    expect(log.opens.has('planner')).toBe(false);
    expect(fake.calls.filter((c) => c.name === 'openTurn').map((c) => c.summary)[0]).toBe(
      'coder · open the turn',
    );
    expect(targetsTested()).toEqual([['t::p'], ['t::p'], ['t::p']]);
  });

  test("a continued run whose Planner submits no plan codes without its parent's", async () => {
    const plan = { summary: 'old plan', steps: ['s'], files: ['b.py'] };
    const { log, result } = runWorkflow(
      {
        step: (turnKey) =>
          turnKey === 'planner' ? { finished: { tool: 'finish', summary: 'no plan' } } : {},
      },
      {},
      { link: linked('continue', 0, plan) },
    );
    await result;
    expect(log.steps.slice(0, 2)).toEqual(['planner#0', 'coder-1#0']);
    expect(log.opens.get('coder-1')!.context).toMatchObject({ plan: null });
  });

  test('a retry of a run that never planned plans', async () => {
    const { log, result } = runWorkflow({}, {}, { link: linked('retry', 0, null) });
    expect(await result).toMatchObject({ state: 'SUCCESS', error: null, targets: [] });
    expect(log.opens.has('planner')).toBe(true);
    expect(log.steps).toEqual(['planner#0', 'coder-1#0', 'tester-1#0']);
  });

  test('while it prepares, a run lists no files, no changes and no protected paths', async () => {
    const held = gate();
    let prepared = false;
    const { result } = runWorkflow({
      activities: {
        prepareRun: async () => {
          await held.promise;
          prepared = true;
          throw new Error('no disk');
        },
      },
    });
    await eventually('prepareRun to start', () => fake.calls.length === 1);
    expect(query('state')).toMatchObject({
      state: 'INIT',
      files: [],
      changedFiles: [],
      failingTests: [],
      tests: { passed: 0, failed: 0, errors: 0 },
      workspace: '/nonexistent/stub-workspace',
    });
    held.open();
    expect(await result).toMatchObject({ state: 'FAILED', error: 'no disk' });
    expect(prepared).toBe(true);
  });

  test('a run that fails before its branch exists keeps the record it started with and lists no files', async () => {
    const { result } = runWorkflow({
      activities: {
        prepareRun: async () => {
          throw new Error('no disk');
        },
      },
    });
    expect(await result).toEqual({
      workflowId: 'wf-1',
      state: 'FAILED',
      reason: 'error',
      iterations: 0,
      maxIterations: 3,
      passRate: null,
      tests: { passed: 0, failed: 0, errors: 0 },
      workspace: '/nonexistent/stub-workspace',
      files: [],
      tokens: { prompt: 0, completion: 0, cached: 0, reasoning: 0 },
      warning: null,
      lastAnalysis: null,
      error: 'no disk',
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
      transitions: [{ from: 'INIT', to: 'FAILED', at: expect.any(String) }],
    });
    expect(fake.calls.map((c) => c.name)).toEqual(['prepareRun']);
  });
});

describe("the Planner's targets", () => {
  test('one that exists joins the run; one that does not goes to the Coder as a note; a malformed one is dropped', async () => {
    const { log, result } = runWorkflow(
      {
        step: (turnKey) =>
          turnKey === 'planner'
            ? {
                finished: {
                  tool: 'submit_plan',
                  plan: {
                    summary: 'p',
                    steps: [],
                    files: [],
                    targets: ['t::real', 't::ghost', '/abs', 't::given'],
                  },
                },
              }
            : {},
        tests: (attempt) =>
          attempt === 0
            ? {}
            : {
                targets: [
                  { id: 't::given', outcome: 'passed' },
                  { id: 't::real', outcome: 'passed' },
                ],
              },
        activities: {
          checkTargets: async (input: { targets: string[] }) => ({
            targets: input.targets.map((id) => ({ id, outcome: 'failed' })),
            unknown: ['t::ghost'],
          }),
        },
      },
      {},
      { repo, targets: ['t::given'] },
    );
    const done = await result;
    const check = fake.calls.find((c) => c.name === 'checkTargets')!;
    expect([check.summary, check.args]).toEqual([
      "tester · check the plan's targets against the baseline",
      [{ reportRef: 'report-0', targets: ['t::real', 't::ghost'] }],
    ]);
    expect(log.opens.get('coder-1')!.context).toMatchObject({
      notes: [
        'The plan named target tests that do not exist: t::ghost, /abs. The run does not require them; the targets it requires are t::given missing, t::real failed.',
      ],
      targets: [
        { id: 't::given', outcome: 'missing' },
        { id: 't::real', outcome: 'failed' },
      ],
      plan: { summary: 'p', steps: [], files: [], targets: ['t::real'] },
    });
    expect(done.targets).toEqual([
      { id: 't::given', outcome: 'passed' },
      { id: 't::real', outcome: 'passed' },
    ]);
  });

  test('without a baseline, a target must be one of the acceptance files', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey) =>
        turnKey === 'planner'
          ? {
              finished: {
                tool: 'submit_plan',
                plan: {
                  summary: 'p',
                  steps: [],
                  files: [],
                  targets: ['tests/test_a.py::t', 'tests/other.py'],
                },
              },
            }
          : {},
      tests: () => ({ targets: [{ id: 'tests/test_a.py::t', outcome: 'passed' }] }),
      activities: { prepareWorkspace: async () => ({ protectedPaths: ['tests/test_a.py'], commit: 'acc' }) },
    });
    const done = await result;
    expect(fake.calls.some((c) => c.name === 'checkTargets')).toBe(false);
    expect(log.opens.get('coder-1')!.context).toMatchObject({
      notes: [
        'The plan named a target test that does not exist: tests/other.py. The run does not require it; the targets it requires are tests/test_a.py::t missing.',
      ],
      protectedPaths: ['tests/test_a.py'],
    });
    expect(done).toMatchObject({
      state: 'SUCCESS',
      targets: [{ id: 'tests/test_a.py::t', outcome: 'passed' }],
    });
    expect(
      (fake.calls.find((c) => c.name === 'runTests')!.args[0] as { acceptanceCommit: unknown })
        .acceptanceCommit,
    ).toBeNull();
  });

  test('a plan naming only malformed targets checks none against the baseline; the note says none are required', async () => {
    const { log, result } = runWorkflow(
      {
        step: (turnKey) =>
          turnKey === 'planner'
            ? {
                finished: {
                  tool: 'submit_plan',
                  plan: { summary: 'p', steps: [], files: [], targets: ['/abs'] },
                },
              }
            : {},
      },
      {},
      { repo },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', targets: [] });
    expect(fake.calls.some((c) => c.name === 'checkTargets')).toBe(false);
    expect(log.opens.get('coder-1')!.context).toMatchObject({
      notes: [
        'The plan named a target test that does not exist: /abs. The run does not require it; the targets it requires are none.',
      ],
    });
  });

  test('a plan whose targets all exist sends the Coder no note', async () => {
    const { log, result } = runWorkflow(
      {
        step: (turnKey) =>
          turnKey === 'planner'
            ? {
                finished: {
                  tool: 'submit_plan',
                  plan: { summary: 'p', steps: [], files: [], targets: ['t::real'] },
                },
              }
            : {},
        tests: (attempt) => (attempt === 0 ? {} : { targets: [{ id: 't::real', outcome: 'passed' }] }),
        activities: {
          checkTargets: async (input: { targets: string[] }) => ({
            targets: input.targets.map((id) => ({ id, outcome: 'passed' })),
            unknown: [],
          }),
        },
      },
      {},
      { repo },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', targets: [{ id: 't::real', outcome: 'passed' }] });
    // The Coder's context names notes only when there are some.
    expect(Object.keys(log.opens.get('coder-1')!.context).sort()).toEqual([
      'analysis',
      'attempt',
      'baseCommit',
      'feedback',
      'language',
      'maxIterations',
      'plan',
      'protectedPaths',
      'regressions',
      'role',
      'targets',
      'task',
      'testCommand',
    ]);
  });

  test('a plan naming no new target is kept as it is', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey) =>
        turnKey === 'planner'
          ? { finished: { tool: 'submit_plan', plan: { summary: 'p', steps: [], files: [], targets: [] } } }
          : {},
    });
    await result;
    expect(log.opens.get('coder-1')!.context).toMatchObject({
      plan: { summary: 'p', steps: [], files: [], targets: [] },
    });
    expect(log.opens.get('coder-1')!.context).not.toHaveProperty('notes');
    expect(log.opens.get('coder-1')!.context).not.toHaveProperty('targets');
  });
});

describe('turns that end badly', () => {
  test('a turn without its finishing call is recorded as the error and the run goes on', async () => {
    const { result } = runWorkflow({
      step: (turnKey) => (turnKey === 'planner' ? { finished: { tool: 'finish', summary: 'oops' } } : {}),
    });
    const done = await result;
    expect(done).toMatchObject({
      state: 'SUCCESS',
      error: 'the turn ended with finish instead of submit_plan',
    });
  });

  test('a turn that makes no progress for 3 steps in a row is given up; one that progresses goes on to its limit', async () => {
    const { log, result } = runWorkflow(
      {
        step: (turnKey, stepIndex) => {
          if (turnKey === 'coder-1') return { progress: false, toolCalls: [] };
          if (turnKey === 'tester-1') return { progress: true, toolCalls: [] };
          if (turnKey === 'reflector-1' && stepIndex < 2)
            return {
              progress: true,
              toolCalls: [
                { kind: 'file' as const, id: `r${stepIndex}`, name: 'read_file' as const, target: 'a.py' },
              ],
            };
          return {};
        },
        tests: (attempt) => (attempt === 1 ? failingTests : {}),
      },
      { maxStepsPerTurn: 4 },
    );
    const done = await result;
    expect(log.steps).toEqual([
      'planner#0',
      'coder-1#0',
      'coder-1#1',
      'coder-1#2',
      'tester-1#0',
      'tester-1#1',
      'tester-1#2',
      'tester-1#3',
      'reflector-1#0',
      'reflector-1#1',
      'reflector-1#2',
      'coder-2#0',
    ]);
    expect(fake.calls.filter((c) => c.name === 'read_file').map((c) => c.summary)).toEqual([
      'reflector · read_file a.py',
      'reflector · read_file a.py',
    ]);
    expect(fake.logs.filter((l) => l.level === 'warn').map((l) => l.attrs)).toEqual([
      { error: 'coder made no progress in 3 steps in a row (only failing calls or no calls)' },
      { error: 'tester did not call its finishing tool within 4 steps' },
    ]);
    expect(done.state).toBe('SUCCESS');
    // The commit of a turn without a summary says so.
    expect(turnCommits().map((c) => c.message)).toEqual([
      'aca: attempt 1, coder: coder turn without a summary',
      'aca: attempt 1, tester: tester turn without a summary',
      'aca: attempt 2, coder: wrote a.py',
    ]);
  });

  test('steps whose tool calls all fail are no progress; one that works resets the count', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex < 5
          ? {
              progress: true,
              toolCalls: [
                {
                  kind: 'file' as const,
                  id: `c${stepIndex}`,
                  name: stepIndex === 2 ? 'read_file' : 'edit_file',
                  target: '',
                },
              ],
            }
          : {},
      activities: {
        edit_file: async () => ({ ok: false, commit: null }),
        read_file: async () => ({ ok: true, commit: 'tool-commit' }),
      },
    });
    await result;
    expect(log.steps.filter((s) => s.startsWith('coder-1'))).toEqual([
      'coder-1#0',
      'coder-1#1',
      'coder-1#2',
      'coder-1#3',
      'coder-1#4',
      'coder-1#5',
    ]);
    expect(fake.calls.filter((c) => c.name === 'edit_file').map((c) => c.summary)).toEqual(
      Array(4).fill('coder · edit_file'),
    );
    // The Coder's turn is committed on top of the tool's commit.
    expect(turnCommits()[0]).toMatchObject({ step: 'coder-1', from: 'tool-commit' });
  });

  test.each([
    ['a search', {}, 'search_files' as const],
    ['a file write of a run that can move (a git store)', { movable: true }, 'create_file' as const],
    ['a file write of a run that cannot move', { movable: false }, 'create_file' as const],
  ])("%s goes to the host's files queue", async (_what, prepared, name) => {
    const { result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex === 0
          ? { toolCalls: [{ kind: 'file' as const, id: 'c0', name, target: 'a' }] }
          : {},
      prepared,
      activities: { [name]: async () => ({ ok: true, commit: null }) },
    });
    expect((await result).state).toBe('SUCCESS');
    const calls = fake.calls.filter((c) => c.name === name);
    expect(calls.map((c) => [c.taskQueue, c.summary])).toEqual([['host-1', `coder · ${name} a`]]);
    expect(calls[0]!.args[0]).toEqual({
      ref: 'wf-1/first-run/run-1/coder-1',
      toolCallId: 'c0',
      place: expect.objectContaining({
        workflowId: 'wf-1',
        branch: 'aca/wf-1',
        disk: 'disk-1',
      }),
      headCommit: 'base',
      execution: 'run-1',
    });
  });

  test("run_command goes to the host's test queue with the run's sandbox setup; its commit is recorded", async () => {
    const { result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex === 0
          ? {
              toolCalls: [
                { kind: 'command' as const, id: 'c0', name: 'run_command' as const, target: 'pytest -q' },
              ],
            }
          : {},
      activities: { runCommand: async () => ({ ok: true, commit: 'command-commit' }) },
    });
    expect((await result).state).toBe('SUCCESS');
    const calls = fake.calls.filter((c) => c.name === 'runCommand');
    expect(calls.map((c) => [c.taskQueue, c.summary])).toEqual([
      ['tests-1', 'coder · run_command pytest -q'],
    ]);
    expect(calls[0]!.args[0]).toMatchObject({
      ref: 'wf-1/first-run/run-1/coder-1',
      toolCallId: 'c0',
      headCommit: 'base',
      place: { disk: 'disk-1' },
      setup: { command: { kind: 'pytest' } },
      protectedPaths: [],
      testsDir: null,
    });
    expect(turnCommits()[0]).toMatchObject({ step: 'coder-1', from: 'command-commit' });
  });

  test("an MCP call goes to its server's queue; one that cannot be made leaves the turn going", async () => {
    const mcpCall = (id: string) => ({
      kind: 'mcp' as const,
      id,
      name: 'mcp__docs__lookup',
      target: '',
      server: 'docs',
    });
    let calls = 0;
    const { log, result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex < 2
          ? { progress: true, toolCalls: [mcpCall(`m${stepIndex}`)] }
          : {},
      activities: {
        callMcpTool: async () => {
          calls += 1;
          if (calls === 1) throw new Error('no worker has the server');
          return { ok: true, commit: null };
        },
      },
    });
    expect((await result).state).toBe('SUCCESS');
    expect(fake.calls.filter((c) => c.name === 'callMcpTool').map((c) => [c.taskQueue, c.summary])).toEqual([
      ['coding-agent-mcp-docs', 'coder · mcp__docs__lookup'],
      ['coding-agent-mcp-docs', 'coder · mcp__docs__lookup'],
    ]);
    expect(log.steps.filter((s) => s.startsWith('coder-1'))).toEqual(['coder-1#0', 'coder-1#1', 'coder-1#2']);
  });

  test('an analysis that says the tests are wrong sends the Tester back; the commit message keeps one line', async () => {
    const { log, result } = runWorkflow({
      tests: (attempt) => (attempt === 1 ? failingTests : {}),
      step: (turnKey) => {
        if (turnKey === 'reflector-1')
          return { finished: { tool: 'submit_analysis', analysis: { ...analysis!, testsWrong: true } } };
        if (turnKey === 'coder-2')
          return { finished: { tool: 'finish', summary: '\n  fixed the tests  \nmore lines' } };
        return {};
      },
    });
    const done = await result;
    expect(log.steps).toEqual([
      'planner#0',
      'coder-1#0',
      'tester-1#0',
      'reflector-1#0',
      'coder-2#0',
      'tester-2#0',
    ]);
    expect(log.opens.get('tester-2')!.context).toMatchObject({ testPass: 2, analysis: { testsWrong: true } });
    expect(turnCommits().map((c) => c.message)).toEqual([
      'aca: attempt 1, coder: wrote a.py',
      'aca: attempt 1, tester: wrote tests',
      'aca: attempt 2, coder: fixed the tests',
      'aca: attempt 2, tester: wrote tests',
    ]);
    expect(log.memory[2]!.input).toMatchObject({
      fix: { summary: expect.stringContaining('Attempt 2 passed after: fixed the tests  \nmore lines') },
    });
    expect(done.state).toBe('SUCCESS');
  });

  test("a Reflector turn that fails stores the failure with the turn's error", async () => {
    const { log, result } = runWorkflow(
      {
        tests: () => failingTests,
        step: (turnKey) => (turnKey === 'reflector-1' ? { progress: false, toolCalls: [] } : {}),
      },
      { maxIterations: 1 },
    );
    const done = await result;
    expect(done).toMatchObject({ state: 'FAILED', reason: 'max_iterations', lastAnalysis: null });
    expect((log.memory[1]!.input as { lastAttempt: unknown }).lastAttempt).toMatchObject({
      analysis: null,
      analysisError: 'reflector made no progress in 3 steps in a row (only failing calls or no calls)',
    });
  });
});

describe('failure memory queue', () => {
  test('writes run in order; a write that fails is counted lost and logged, the next still runs', async () => {
    setUpFakeRun({});
    const done: string[] = [];
    const queue = new MemoryQueue();
    queue.add('a', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      done.push('a');
    });
    queue.add('b', () => Promise.reject(new Error('db down')));
    queue.add('c', async () => {
      done.push('c');
    });
    await queue.drained();
    expect([done, queue.lost]).toEqual([['a', 'c'], 1]);
    expect(fake.logs).toEqual([
      { level: 'error', message: 'failure memory write given up', attrs: { what: 'b', error: 'db down' } },
    ]);
    const off = new MemoryQueue(false);
    off.add('x', async () => {
      done.push('x');
    });
    await off.drained();
    expect(done).toEqual(['a', 'c']);
  });

  test('a run whose memory writes were lost still ends, and says so', async () => {
    const { result } = runWorkflow({ activities: { rememberRun: () => Promise.reject(new Error('gone')) } });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    expect(fake.logs.filter((l) => l.level === 'error').map((l) => [l.message, l.attrs])).toEqual([
      ['failure memory write given up', { what: 'task', error: 'gone' }],
      ['failure memory records lost after retrying for an hour', { count: 1 }],
    ]);
  });

  test('describeFailure gives the innermost message of a chain', () => {
    const inner = new Error('inner');
    const middle = Object.assign(new Error('middle'), { cause: inner });
    const outer = Object.assign(new Error('outer'), { cause: middle });
    expect(describeFailure(outer)).toBe('inner');
    expect(describeFailure(Object.assign(new Error('outer'), { cause: new Error('') }))).toBe('outer');
    expect(describeFailure('text')).toBe('text');
    expect(describeFailure(new Error('alone'))).toBe('alone');
  });
});

describe('a Reflector turn without an analysis', () => {
  test('keeps the tests as they are, and a lost failure record is logged by its attempt', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey) =>
        turnKey === 'reflector-1' ? { finished: { tool: 'finish', summary: 'no analysis' } } : {},
      tests: (attempt) => (attempt === 1 ? failingTests : {}),
      activities: {
        rememberAttempt: async () => {
          throw new Error('memory down');
        },
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(log.steps).toEqual(['planner#0', 'coder-1#0', 'tester-1#0', 'reflector-1#0', 'coder-2#0']);
    expect(
      fake.logs
        .filter((l) => l.message === 'failure memory write given up')
        .map((l) => (l.attrs as { what: string }).what),
    ).toEqual(['failure 1']);
  });
});

/** The host steps that committed a turn's work before their own, in order. */
/** The commit steps of the run's turns, in order: where each started from and what it committed. */
function turnCommits(): Array<Record<string, unknown>> {
  return fake.calls
    .filter((c) => c.name === 'commitTurn')
    .map((c) => {
      const input = c.args[0] as {
        message: string;
        step: string;
        execution: string;
        headCommit: string;
      };
      return {
        taskQueue: c.taskQueue,
        from: input.headCommit,
        message: input.message,
        step: input.step,
        execution: input.execution,
      };
    });
}

describe('every turn opens with a step of its own', () => {
  test("the Reflector's context carries the report, regressions and targets", async () => {
    const { log, result } = runWorkflow(
      {
        tests: (attempt) =>
          attempt === 1
            ? {
                ...failingTests,
                success: false,
                regressions: ['t::old'],
                targets: [{ id: 'tests/t.py::x', outcome: 'failed' as const }],
              }
            : { targets: [{ id: 'tests/t.py::x', outcome: 'passed' as const }] },
      },
      {},
      { targets: ['tests/t.py::x'] },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(log.opens.get('reflector-1')!.context).toEqual({
      role: 'reflector',
      task: 'Write a.py',
      language: 'python',
      attempt: 1,
      maxIterations: 3,
      protectedPaths: [],
      baseCommit: 'base',
      planFiles: ['a.py'],
      testReportRef: 'report-1',
      regressions: ['t::old'],
      targets: [{ id: 'tests/t.py::x', outcome: 'failed' }],
    });
    expect(fake.calls.find((c) => c.name === 'prepareWorkspace')!.summary).toBe('prepare workspace');
    expect(fake.calls.filter((c) => c.name === 'openTurn').map((c) => [c.taskQueue, c.summary])).toEqual([
      ['host-1', 'planner · recall similar failures, open the turn'],
      ['host-1', 'coder · open the turn'],
      ['host-1', 'tester · open the turn'],
      ['host-1', 'reflector · open the turn'],
      ['host-1', 'coder · open the turn'],
    ]);
    // The test run opens nothing and commits nothing: its input says only what to run and judge.
    const names = fake.calls.map((c) => c.name);
    const tested = names.indexOf('runTests');
    expect(names.slice(tested, tested + 3)).toEqual(['runTests', 'openTurn', 'agentStep']);
    expect(Object.keys(fake.calls[tested]!.args[0] as object).sort()).toEqual([
      'acceptanceCommit',
      'attempt',
      'baselineRef',
      'headCommit',
      'language',
      'place',
      'protectedPaths',
      'runKey',
      'setup',
      'targets',
      'testsDir',
    ]);
  });

  test("turns an earlier execution opened (a Reset's history): their steps and calls name that conversation", async () => {
    const earlier = (ref: string) => ref.replace('/run-1/', '/before-reset/');
    const { result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex === 0
          ? {
              progress: true,
              toolCalls: [{ kind: 'file' as const, id: 'w1', name: 'create_file' as const, target: 'a.py' }],
            }
          : {},
      activities: {
        openTurn: async (input: { open: { ref: string } }) => ({
          // The Planner's and the Coder's openings are in the kept history; the Tester's is this
          // execution's own.
          ref: input.open.ref.endsWith('/tester-1') ? input.open.ref : earlier(input.open.ref),
        }),
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    const takenOver = (name: string) =>
      fake.calls
        .filter((c) => c.name === name)
        .map((c) => {
          const args = c.args[0] as { ref: string; openedAs?: string };
          return [args.ref.split('/').pop(), args.openedAs ?? null];
        });
    expect(takenOver('agentStep')).toEqual([
      ['planner', 'wf-1/first-run/before-reset/planner'],
      ['coder-1', 'wf-1/first-run/before-reset/coder-1'],
      ['coder-1', 'wf-1/first-run/before-reset/coder-1'],
      ['tester-1', null],
    ]);
    expect(takenOver('create_file')).toEqual([['coder-1', 'wf-1/first-run/before-reset/coder-1']]);
  });

  test('a step that took the conversation over names it: the steps after it follow, so a second Reset takes over from there', async () => {
    const exec = (ref: string, name: string) => ref.replace('/run-1/', `/${name}/`);
    const { result } = runWorkflow({
      step: (turnKey, stepIndex) =>
        turnKey !== 'coder-1'
          ? {}
          : stepIndex === 0
            ? {
                progress: true,
                toolCalls: [
                  { kind: 'file' as const, id: 'w1', name: 'create_file' as const, target: 'a.py' },
                ],
                // In the kept history: execution B's first step, which took A's opening over.
                ref: 'wf-1/first-run/exec-b/coder-1',
              }
            : {},
      activities: {
        openTurn: async (input: { open: { ref: string } }) => ({
          ref: input.open.ref.endsWith('/coder-1') ? exec(input.open.ref, 'exec-a') : input.open.ref,
        }),
        // Execution C's call: it took B's conversation over, and says so.
        create_file: async (input: { ref: string; openedAs?: string }) => ({
          ok: true,
          ...(input.openedAs ? { ref: input.ref } : {}),
        }),
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    const inputs = (name: string) =>
      fake.calls
        .filter((c) => c.name === name && (c.args[0] as { ref: string }).ref.endsWith('/coder-1'))
        .map((c) => (c.args[0] as { openedAs?: string }).openedAs ?? null);
    expect(inputs('agentStep')).toEqual(['wf-1/first-run/exec-a/coder-1', null]);
    expect(inputs('create_file')).toEqual(['wf-1/first-run/exec-b/coder-1']);
  });

  test("the Planner's turn opens after the workspace step, with the paths it protects", async () => {
    const { log, result } = runWorkflow({
      activities: {
        prepareWorkspace: async () => ({ protectedPaths: ['tests/test_a.py'], commit: 'acc' }),
      },
    });
    await result;
    const names = fake.calls.map((c) => c.name);
    expect(names.slice(0, 4)).toEqual(['prepareRun', 'prepareWorkspace', 'openTurn', 'agentStep']);
    expect(fake.calls[1]!.taskQueue).toBe('host-1');
    expect(fake.calls[2]!.args[0]).toMatchObject({ headCommit: 'acc' });
    expect(log.opens.get('planner')!.context.protectedPaths).toEqual(['tests/test_a.py']);
    expect(fake.calls.find((c) => c.name === 'runTests')!.args[0]).toMatchObject({
      protectedPaths: ['tests/test_a.py'],
    });
  });

  test('a passing run that misses a target reflects too', async () => {
    const { log, result } = runWorkflow(
      {
        tests: (attempt) => ({
          targets: [
            { id: 'tests/t.py::x', outcome: attempt === 1 ? ('missing' as const) : ('passed' as const) },
          ],
        }),
      },
      {},
      { targets: ['tests/t.py::x'] },
    );
    expect(await result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(fake.calls.filter((c) => c.name === 'openTurn').map((c) => c.summary)).toContain(
      'reflector · open the turn',
    );
    expect(log.opens.get('reflector-1')!.context).toMatchObject({
      testReportRef: 'report-1',
      targets: [{ id: 'tests/t.py::x', outcome: 'missing' }],
    });
  });
});

describe('commits of the turns', () => {
  test("a commit message takes the summary's first line with text in it", async () => {
    const { result } = runWorkflow({
      step: (turnKey) =>
        turnKey === 'coder-1' ? { finished: { tool: 'finish', summary: '   \n  the fix \nmore' } } : {},
    });
    await result;
    expect(turnCommits().map((c) => c.message)).toEqual([
      'aca: attempt 1, coder: the fix',
      'aca: attempt 1, tester: wrote tests',
    ]);
  });

  test("each turn ends with its own commit step on the host's files queue, named by the turn, from the last commit", async () => {
    const long = `rewrote ${'a'.repeat(150)}`;
    const { result } = runWorkflow({
      step: (turnKey) => (turnKey === 'coder-1' ? { finished: { tool: 'finish', summary: long } } : {}),
    });
    expect(await result).toMatchObject({ state: 'SUCCESS', headCommit: 'c-tester-1' });
    const message = `aca: attempt 1, coder: ${long.slice(0, 120)}`;
    expect(turnCommits()).toEqual([
      { taskQueue: 'host-1', from: 'base', message, step: 'coder-1', execution: fake.info.runId },
      {
        taskQueue: 'host-1',
        from: 'c-coder-1',
        message: 'aca: attempt 1, tester: wrote tests',
        step: 'tester-1',
        execution: fake.info.runId,
      },
    ]);
    expect(fake.calls.filter((c) => c.name === 'commitTurn').map((c) => c.summary)).toEqual([
      'git · commit coder turn of attempt 1',
      'git · commit tester turn of attempt 1',
    ]);
    // Each commit step follows its turn's last model step; the test run starts from the last commit.
    const names = fake.calls.map((c) => c.name);
    expect(names[names.indexOf('commitTurn') - 1]).toBe('agentStep');
    expect(fake.calls.find((c) => c.name === 'runTests')!.args[0]).toMatchObject({
      headCommit: 'c-tester-1',
    });
    // The ending starts from the last commit.
    expect(fake.calls.find((c) => c.name === 'closeRun')!.args[0]).toEqual({
      place: expect.objectContaining({ branch: 'aca/wf-1' }) as unknown,
      headCommit: 'c-tester-1',
      baseCommit: 'base',
      listFiles: true,
    });
  });

  test('a turn that commits nothing leaves the recorded commit where it was', async () => {
    const { result } = runWorkflow({
      activities: {
        commitTurn: async (input: { step: string }) =>
          input.step === 'tester-1' ? null : committedBy(input),
      },
    });
    expect(await result).toMatchObject({ state: 'SUCCESS', headCommit: 'c-coder-1' });
  });

  test('a run stopped in a turn ends from the commit of the turn before', async () => {
    const { result } = runWorkflow(
      { step: (turnKey) => (turnKey === 'tester-1' ? { usage: { prompt: 500, completion: 0 } } : {}) },
      { maxTokens: 100 },
    );
    expect(await result).toMatchObject({ state: 'FAILED', reason: 'budget', headCommit: 'c-coder-1' });
    expect(turnCommits()).toEqual([expect.objectContaining({ step: 'coder-1' })]);
    expect(fake.calls.find((c) => c.name === 'closeRun')!.args[0]).toMatchObject({
      headCommit: 'c-coder-1',
    });
  });
});

describe('the INIT phase, one step per job', () => {
  test.each([
    ['a run without --repo or a setup command', {}, ['prepareRun', 'prepareWorkspace']],
    ['a --repo run', { repo }, ['prepareRun', 'runTests', 'prepareWorkspace']],
    [
      'a run with a setup command',
      { setupCommand: 'make deps' },
      ['prepareRun', 'runSetup', 'prepareWorkspace'],
    ],
  ])('%s: its steps before the Planner opens', async (_name, more, steps) => {
    const runSetup = async () => ({
      ok: true,
      outcome: 'completed',
      message: null,
      outputTail: '',
      commit: null,
    });
    const { result } = runWorkflow({ activities: { runSetup } }, {}, more);
    expect(await result).toMatchObject({ state: 'SUCCESS' });
    const names = fake.calls.map((c) => c.name);
    expect(names.slice(0, names.indexOf('openTurn'))).toEqual(steps);
    expect(fake.calls[0]!.args[0]).not.toHaveProperty('workspaceStep');
    const workspace = fake.calls.find((c) => c.name === 'prepareWorkspace')!;
    expect(workspace.taskQueue).toBe('host-1');
    expect(workspace.args[0]).toEqual({
      testsDir: null,
      commitMessage: 'aca: acceptance tests given with --tests',
      execution: 'run-1',
      place: expect.objectContaining({ disk: 'disk-1' }) as unknown,
      headCommit: 'base',
    });
  });
});
