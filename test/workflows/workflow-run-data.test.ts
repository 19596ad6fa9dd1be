/**
 * The data a run records, pinned whole: the transition table, the exact transition lists of
 * representative runs, the feedback each Coder turn is given, the activity calls made and the
 * full result. The workflow code runs through the workflow fake (plain functions, no server), so
 * a change of data that leaves the workflow's commands alone still fails here.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../../src/shared/failure-types';
import type { RunResult } from '../../src/shared/run-types';
import type { AgentState, Transition } from '../../src/shared/types';
import { codingAgentWorkflow } from '../../src/workflows/coding-agent';
import { isEndState, RunStateMachine, TRANSITIONS, type RunPhase } from '../../src/workflows/state-machine';
import {
  committedBy,
  eventually,
  failingTests,
  fakeRunInput,
  gate,
  setUpFakeRun,
  type FakeRunScript,
} from '../helpers/fake-run';
import { fakePlace, runOutcome } from '../helpers/fake-run';
import { fake, query, signal, update } from '../helpers/workflow-fake';

const PHASES: RunPhase[] = ['INIT', 'PLANNING', 'CODING', 'TESTING', 'REFLECTING', 'SUCCESS', 'FAILED'];

const moves = (transitions: readonly Transition[]) => transitions.map((t) => `${t.from}>${t.to}`);

describe('the transition table', () => {
  test('is exactly the documented one', () => {
    expect(TRANSITIONS).toEqual({
      INIT: ['PLANNING'],
      PLANNING: ['CODING'],
      CODING: ['TESTING'],
      TESTING: ['SUCCESS', 'REFLECTING'],
      REFLECTING: ['CODING', 'FAILED'],
      SUCCESS: [],
      FAILED: [],
    });
    expect(PHASES.filter(isEndState)).toEqual(['SUCCESS', 'FAILED']);
  });

  test('every move the table does not list is refused, naming both states; every listed one is recorded', () => {
    for (const from of PHASES) {
      for (const to of PHASES) {
        const machine = new RunStateMachine({ phase: from, paused: false, transitions: [] }, () => undefined);
        if (TRANSITIONS[from].includes(to)) {
          machine.move(to);
          expect([machine.phase, moves(machine.transitions)]).toEqual([to, [`${from}>${to}`]]);
        } else {
          let thrown: unknown;
          try {
            machine.move(to);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(ApplicationFailure);
          expect(thrown).toMatchObject({
            type: FAILURE_TYPES.forbiddenStateMove,
            nonRetryable: true,
            message: `the run cannot move from ${from} to ${to}: the state table does not allow it`,
          });
          expect([machine.phase, machine.transitions]).toEqual([from, []]);
        }
      }
    }
  });
});

describe('the state machine', () => {
  const at = expect.any(String);

  test('a new machine starts in INIT, unpaused, with no moves', () => {
    const changes: string[] = [];
    const machine = new RunStateMachine(undefined, () => changes.push(machine.state));
    expect(machine.save()).toEqual({ phase: 'INIT', paused: false, transitions: [] });
    expect([machine.state, machine.paused, machine.ended]).toEqual(['INIT', false, false]);
    machine.move('PLANNING');
    expect(changes).toEqual(['PLANNING']);
    expect(machine.transitions).toEqual([{ from: 'INIT', to: 'PLANNING', at }]);
    expect(new Date(machine.transitions[0]!.at).toISOString()).toBe(machine.transitions[0]!.at);
  });

  test('pause and resume record one move each; moves made while paused are not recorded twice', () => {
    const changes: string[] = [];
    const machine = new RunStateMachine({ phase: 'CODING', paused: false, transitions: [] }, () =>
      changes.push(machine.state),
    );
    expect(machine.pause()).toBe(true);
    expect(machine.pause()).toBe(false);
    expect([machine.state, machine.phase, machine.paused]).toEqual(['PAUSED', 'CODING', true]);
    machine.move('TESTING');
    expect([machine.state, machine.phase]).toEqual(['PAUSED', 'TESTING']);
    machine.move('REFLECTING');
    expect(machine.resume()).toBe(true);
    expect(machine.resume()).toBe(false);
    expect(moves(machine.transitions)).toEqual(['CODING>PAUSED', 'PAUSED>REFLECTING']);
    expect(changes).toEqual(['PAUSED', 'PAUSED', 'PAUSED', 'REFLECTING']);
  });

  test('an ending clears the pause and is recorded from PAUSED; an ended run cannot pause or stop', () => {
    const machine = new RunStateMachine(
      { phase: 'REFLECTING', paused: false, transitions: [] },
      () => undefined,
    );
    machine.pause();
    machine.move('FAILED');
    expect([machine.state, machine.paused, machine.ended]).toEqual(['FAILED', false, true]);
    expect(moves(machine.transitions)).toEqual(['REFLECTING>PAUSED', 'PAUSED>FAILED']);
    expect(machine.pause()).toBe(false);
    expect(machine.resume()).toBe(false);
    expect(() => machine.stop()).toThrow(
      expect.objectContaining({
        type: FAILURE_TYPES.forbiddenStateMove,
        message: 'the run cannot be stopped: it has already ended FAILED',
      }),
    );
    expect(moves(machine.transitions)).toEqual(['REFLECTING>PAUSED', 'PAUSED>FAILED']);
  });

  test('stop ends any unfinished phase FAILED, paused or not', () => {
    for (const phase of PHASES.filter((p) => !isEndState(p))) {
      const machine = new RunStateMachine({ phase, paused: false, transitions: [] }, () => undefined);
      machine.stop();
      expect(moves(machine.transitions)).toEqual([`${phase}>FAILED`]);
      const paused = new RunStateMachine({ phase, paused: true, transitions: [] }, () => undefined);
      paused.stop();
      expect([paused.state, moves(paused.transitions)]).toEqual(['FAILED', ['PAUSED>FAILED']]);
    }
  });

  test('save and a machine made from a saved state share no list with the original', () => {
    const first = new RunStateMachine(undefined, () => undefined);
    first.move('PLANNING');
    const saved = first.save();
    first.move('CODING');
    expect(moves(saved.transitions)).toEqual(['INIT>PLANNING']);
    const second = new RunStateMachine(saved, () => undefined);
    second.move('CODING');
    second.move('TESTING');
    expect(moves(saved.transitions)).toEqual(['INIT>PLANNING']);
    expect(moves(second.transitions)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>TESTING']);
  });
});

/** Starts the workflow on the fake; the promise settles when it ends. */
function runWorkflow(script: FakeRunScript = {}, ...input: Parameters<typeof fakeRunInput>) {
  const log = setUpFakeRun(script);
  const result = runOutcome(codingAgentWorkflow(fakeRunInput(...input)));
  return { log, result };
}

const at = expect.any(String);
const t = (from: AgentState, to: AgentState) => ({ from, to, at });

describe('a run, pinned whole', () => {
  test('success at the first attempt: the full result, every activity call and memory write', async () => {
    const { log, result } = runWorkflow();
    const expected: RunResult = {
      workflowId: 'wf-1',
      state: 'SUCCESS',
      reason: null,
      iterations: 1,
      maxIterations: 3,
      passRate: 1,
      tests: { passed: 2, failed: 0, errors: 0 },
      workspace: '/nonexistent/stub-workspace',
      files: ['a.py'],
      tokens: { prompt: 30, completion: 15, cached: 0, reasoning: 0 },
      transitions: [
        t('INIT', 'PLANNING'),
        t('PLANNING', 'CODING'),
        t('CODING', 'TESTING'),
        t('TESTING', 'SUCCESS'),
      ],
      warning: null,
      lastAnalysis: null,
      error: null,
      repo: null,
      branch: 'aca/wf-1',
      baseCommit: 'base',
      headCommit: 'c-tester-1',
      changedFiles: [{ path: 'a.py', status: 'added', added: 1, removed: 0 }],
      baseline: null,
      regressions: [],
      targets: [],
      failingTests: [],
      unknownTargets: [],
      attempts: [{ iteration: 1, commit: 'c-tester-1', passRate: 1 }],
      cost: { usd: 0.75, byAgent: { planner: 0.25, coder: 0.25, tester: 0.25, reflector: 0 } },
      parentRun: null,
      place: fakePlace('wf-1', '/nonexistent/stub-workspace'),
      testCommand: 'pytest',
    };
    expect(await result).toEqual(expected);
    expect(log.steps).toEqual(['planner#0', 'coder-1#0', 'tester-1#0']);
    expect(log.memory).toEqual([
      { kind: 'run', input: { workflowId: 'wf-1', task: 'Write a.py', language: 'python' } },
      {
        kind: 'outcome',
        input: {
          workflowId: 'wf-1',
          status: 'success',
          reason: null,
          fix: null,
          lastAttempt: {
            workflowId: 'wf-1',
            iteration: 1,
            passRate: 1,
            passed: 2,
            failed: 0,
            reportRef: null,
            analysis: null,
            analysisError: null,
          },
        },
      },
    ]);
    /** Where the run's files are, and the commit a step starts from, as every host step is given them. */
    const at = (headCommit: string) => ({
      place: fakePlace('wf-1', '/nonexistent/stub-workspace'),
      headCommit,
    });
    const base = {
      task: 'Write a.py',
      language: 'python',
      attempt: 1,
      maxIterations: 3,
      protectedPaths: [],
      baseCommit: 'base',
    };
    const ref = (turn: string) => `wf-1/first-run/run-1/${turn}`;
    const step = (turn: string) => ({ ref: ref(turn), model: 'stub', stepIndex: 0, timeoutMs: 120_000 });
    const host = 'host-1';
    const opening = (turn: string, context: object) => ({
      name: 'openTurn',
      summary: `${turn} · open the turn`,
      args: [
        {
          open: { ref: ref(turn === 'tester' ? 'tester-1' : `${turn}-1`), model: 'stub', context },
          ...at(turn === 'coder' ? 'base' : 'c-coder-1'),
        },
      ],
      taskQueue: host,
    });
    // Each step does one job: the workspace, each turn's opening and each turn's commit are steps
    // of their own on the host's files queue.
    expect(fake.calls).toEqual([
      {
        name: 'prepareRun',
        summary: 'git · repository of the run',
        args: [
          {
            workflowId: 'wf-1',
            workspace: '/nonexistent/stub-workspace',
            language: 'python',
            repo: null,
            testCommand: null,
            setupCommand: null,
            start: null,
          },
        ],
        taskQueue: undefined,
      },
      {
        name: 'prepareWorkspace',
        summary: 'prepare workspace',
        args: [
          {
            testsDir: null,
            commitMessage: 'aca: acceptance tests given with --tests',
            execution: 'run-1',
            ...at('base'),
          },
        ],
        taskQueue: host,
      },
      {
        name: 'openTurn',
        summary: 'planner · recall similar failures, open the turn',
        args: [
          {
            open: {
              ref: ref('planner'),
              model: 'stub',
              context: { role: 'planner', ...base },
              recallLessons: { workflowId: 'wf-1', task: 'Write a.py' },
            },
            ...at('base'),
          },
        ],
        taskQueue: host,
      },
      { name: 'agentStep', summary: 'planner · model step 1', args: [step('planner')], taskQueue: undefined },
      {
        name: 'rememberRun',
        summary: 'memory · store task',
        args: [{ workflowId: 'wf-1', task: 'Write a.py', language: 'python' }],
        taskQueue: undefined,
      },
      opening('coder', {
        role: 'coder',
        ...base,
        plan: { summary: 'plan', steps: ['write it'], files: ['a.py'] },
        analysis: null,
        feedback: [],
        regressions: [],
      }),
      { name: 'agentStep', summary: 'coder · model step 1', args: [step('coder-1')], taskQueue: undefined },
      {
        name: 'commitTurn',
        summary: 'git · commit coder turn of attempt 1',
        args: [
          {
            ...at('base'),
            message: 'aca: attempt 1, coder: wrote a.py',
            step: 'coder-1',
            execution: 'run-1',
          },
        ],
        taskQueue: host,
      },
      opening('tester', { role: 'tester', ...base, planFiles: ['a.py'], testPass: 1, analysis: null }),
      { name: 'agentStep', summary: 'tester · model step 1', args: [step('tester-1')], taskQueue: undefined },
      {
        name: 'commitTurn',
        summary: 'git · commit tester turn of attempt 1',
        args: [
          {
            ...at('c-coder-1'),
            message: 'aca: attempt 1, tester: wrote tests',
            step: 'tester-1',
            execution: 'run-1',
          },
        ],
        taskQueue: host,
      },
      {
        name: 'runTests',
        summary: 'tester · run tests (attempt 1)',
        args: [
          {
            runKey: 'wf-1/first-run',
            attempt: 1,
            language: 'python',
            testsDir: null,
            protectedPaths: [],
            setup: {
              command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
              dependencies: [],
              limits: {},
            },
            baselineRef: null,
            ...at('c-tester-1'),
            acceptanceCommit: null,
          },
        ],
        taskQueue: 'tests-1',
      },
      {
        name: 'closeRun',
        summary: 'git · changed files; give the workspace back from the sandbox user',
        args: [{ ...at('c-tester-1'), baseCommit: 'base', listFiles: true }],
        taskQueue: host,
      },
      // Memory writes are queued behind each other and run while the run goes on.
      {
        name: 'rememberOutcome',
        summary: 'memory · store attempt 1 and outcome',
        args: [log.memory[1]!.input],
        taskQueue: undefined,
      },
    ]);
    expect(fake.metrics).toEqual([
      { name: 'aca_iterations', value: 1, attributes: { language: 'python' } },
      { name: 'aca_runs_finished', value: 1, attributes: { state: 'SUCCESS', reason: 'none' } },
    ]);
  });

  test('reflect, then success: exact moves, the analysis passed on, the fix stored', async () => {
    const { log, result } = runWorkflow({ tests: (attempt) => (attempt === 1 ? failingTests : {}) });
    const done = await result;
    expect(done.transitions).toEqual([
      t('INIT', 'PLANNING'),
      t('PLANNING', 'CODING'),
      t('CODING', 'TESTING'),
      t('TESTING', 'REFLECTING'),
      t('REFLECTING', 'CODING'),
      t('CODING', 'TESTING'),
      t('TESTING', 'SUCCESS'),
    ]);
    expect(log.steps).toEqual(['planner#0', 'coder-1#0', 'tester-1#0', 'reflector-1#0', 'coder-2#0']);
    expect(done.attempts).toEqual([
      { iteration: 1, commit: 'c-tester-1', passRate: 0.5 },
      { iteration: 2, commit: 'c-coder-2', passRate: 1 },
    ]);
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
      regressions: [],
    });
    expect(log.opens.get('coder-2')!.context).toEqual({
      role: 'coder',
      task: 'Write a.py',
      language: 'python',
      attempt: 2,
      maxIterations: 3,
      protectedPaths: [],
      baseCommit: 'base',
      plan: { summary: 'plan', steps: ['write it'], files: ['a.py'] },
      analysis: {
        rootCause: 'off by one',
        fixHypothesis: 'add one',
        filesToChange: ['a.py'],
        testsWrong: false,
      },
      feedback: [],
      regressions: [],
    });
    const analysis = {
      rootCause: 'off by one',
      fixHypothesis: 'add one',
      filesToChange: ['a.py'],
      testsWrong: false,
    };
    expect(log.memory.map((m) => m.input)).toEqual([
      { workflowId: 'wf-1', task: 'Write a.py', language: 'python' },
      {
        workflowId: 'wf-1',
        iteration: 1,
        passRate: 0.5,
        passed: 1,
        failed: 1,
        reportRef: 'report-1',
        analysis,
        analysisError: null,
      },
      {
        workflowId: 'wf-1',
        status: 'success',
        reason: null,
        fix: {
          iteration: 2,
          summary: 'Attempt 2 passed after: wrote a.py The analysis that led to it: add one',
        },
        lastAttempt: {
          workflowId: 'wf-1',
          iteration: 2,
          passRate: 1,
          passed: 2,
          failed: 0,
          reportRef: null,
          analysis: null,
          analysisError: null,
        },
      },
    ]);
    expect(done).toMatchObject({ state: 'SUCCESS', reason: null, lastAnalysis: analysis, error: null });
  });

  test('failure at the limit: FAILED max_iterations from REFLECTING, the last attempt stored with the outcome', async () => {
    const { log, result } = runWorkflow({ tests: () => failingTests }, { maxIterations: 2, warnAt: 1 });
    const done = await result;
    expect(done.transitions).toEqual([
      t('INIT', 'PLANNING'),
      t('PLANNING', 'CODING'),
      t('CODING', 'TESTING'),
      t('TESTING', 'REFLECTING'),
      t('REFLECTING', 'CODING'),
      t('CODING', 'TESTING'),
      t('TESTING', 'REFLECTING'),
      t('REFLECTING', 'FAILED'),
    ]);
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      iterations: 2,
      maxIterations: 2,
      passRate: 0.5,
      tests: { passed: 1, failed: 1, errors: 0 },
      warning: 'iteration 1 of 2: 1 attempts left before the run fails',
    });
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'attempt', 'outcome']);
    expect(log.memory[2]!.input).toEqual({
      workflowId: 'wf-1',
      status: 'failed',
      reason: 'max_iterations',
      fix: null,
      lastAttempt: {
        workflowId: 'wf-1',
        iteration: 2,
        passRate: 0.5,
        passed: 1,
        failed: 1,
        reportRef: 'report-2',
        analysis: {
          rootCause: 'off by one',
          fixHypothesis: 'add one',
          filesToChange: ['a.py'],
          testsWrong: false,
        },
        analysisError: null,
      },
    });
    expect(fake.metrics.at(-1)).toEqual({
      name: 'aca_runs_finished',
      value: 1,
      attributes: { state: 'FAILED', reason: 'max_iterations' },
    });
  });

  test('paused in the middle of a model step: one move out, one back, no step while paused, no move twice', async () => {
    const held = gate();
    const { log, result } = runWorkflow({
      step: async (turnKey, stepIndex) => {
        if (turnKey !== 'coder-1' || stepIndex > 0) return {};
        await held.promise;
        return { finished: null };
      },
    });
    await eventually('the Coder step', () => log.steps.includes('coder-1#0'));
    signal('pause');
    signal('pause');
    expect(query('state')).toMatchObject({ state: 'PAUSED', paused: true });
    held.open();
    // The step's answer is taken in; the Coder's next step waits for the resume.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const callsWhilePaused = fake.calls.map((c) => c.name);
    expect(callsWhilePaused.at(-1)).toBe('agentStep');
    signal('resume');
    signal('resume');
    const done = await result;
    expect(done.transitions).toEqual([
      t('INIT', 'PLANNING'),
      t('PLANNING', 'CODING'),
      t('CODING', 'PAUSED'),
      t('PAUSED', 'CODING'),
      t('CODING', 'TESTING'),
      t('TESTING', 'SUCCESS'),
    ]);
    expect(fake.logs.filter((l) => l.level === 'info').map((l) => [l.message, l.attrs])).toEqual([
      ['run paused', { phase: 'CODING' }],
      ['run resumed', { phase: 'CODING' }],
    ]);
  });

  test('paused while the last step of a phase runs: the phase moves underneath, recorded once on resume', async () => {
    const held = gate();
    // The Coder's commit is the last step of CODING.
    const { result } = runWorkflow({
      activities: {
        commitTurn: async (input: { step: string }) => {
          await held.promise;
          return committedBy(input);
        },
      },
    });
    await eventually('the commit of the Coder turn', () => fake.calls.some((c) => c.name === 'commitTurn'));
    signal('pause');
    held.open();
    await eventually(
      'the move to TESTING',
      () => (query('state') as { transitions: Transition[] }).transitions.length === 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(query('state')).toMatchObject({ state: 'PAUSED', paused: true });
    // The Tester's turn waits to open.
    expect(fake.calls.filter((c) => c.name === 'openTurn').length).toBe(2);
    signal('resume');
    const done = await result;
    expect(moves(done.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>PAUSED',
      'PAUSED>TESTING',
      'TESTING>SUCCESS',
    ]);
  });

  test("feedback reaches the next Coder turn only; the Reflector's analysis reaches the Coder after it", async () => {
    const atPlanner = gate();
    const atCoder = gate();
    const { log, result } = runWorkflow(
      {
        tests: (attempt) => (attempt < 3 ? failingTests : {}),
        step: async (turnKey) => {
          if (turnKey === 'planner') await atPlanner.promise;
          if (turnKey === 'coder-2') await atCoder.promise;
          return {};
        },
      },
      { maxIterations: 4, warnAt: 4 },
    );
    await eventually('the Planner step', () => log.steps.includes('planner#0'));
    expect(update('feedback', '  use integers  ')).toEqual({ accepted: true, pending: 1 });
    atPlanner.open();
    await eventually('the second Coder step', () => log.steps.includes('coder-2#0'));
    expect(update('feedback', 'mind the sign')).toEqual({ accepted: true, pending: 1 });
    atCoder.open();
    const done = await result;
    expect(done.state).toBe('SUCCESS');
    const coderContext = (key: string) => {
      const { feedback, analysis } = log.opens.get(key)!.context as { feedback: string[]; analysis: unknown };
      return { feedback, analysis };
    };
    const analysis = {
      rootCause: 'off by one',
      fixHypothesis: 'add one',
      filesToChange: ['a.py'],
      testsWrong: false,
    };
    expect(['coder-1', 'coder-2', 'coder-3'].map(coderContext)).toEqual([
      { feedback: ['use integers'], analysis: null },
      { feedback: [], analysis },
      { feedback: ['mind the sign'], analysis },
    ]);
    expect(() => update('feedback', 'too late')).toThrow('the run has already ended (SUCCESS)');
  });
});

describe('a run stopped early', () => {
  test('cancelled during a model step: FAILED cancelled from the phase it was in, memory still written', async () => {
    const { log, result } = runWorkflow({
      step: (turnKey) => {
        if (turnKey === 'coder-1') throw new CancelledFailure('cancelled');
        return {};
      },
    });
    const done = await result;
    expect(moves(done.transitions)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>FAILED']);
    expect(done).toMatchObject({ state: 'FAILED', reason: 'cancelled', error: 'the run was cancelled' });
    expect(log.memory.map((m) => m.input)).toEqual([
      { workflowId: 'wf-1', task: 'Write a.py', language: 'python' },
      { workflowId: 'wf-1', status: 'failed', reason: 'cancelled', fix: null },
    ]);
    expect(fake.calls.find((c) => c.name === 'rememberOutcome')!.summary).toBe('memory · store outcome');
  });

  test('an activity that fails for good: FAILED error with the innermost message', async () => {
    const { log, result } = runWorkflow({
      activities: {
        runTests: () => {
          throw ApplicationFailure.nonRetryable('sandbox broke', 'SandboxUnavailable');
        },
      },
    });
    const done = await result;
    expect(moves(done.transitions)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>FAILED',
    ]);
    expect(done).toMatchObject({ state: 'FAILED', reason: 'error', error: 'sandbox broke' });
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'outcome']);
    expect(fake.logs.find((l) => l.level === 'error')).toEqual({
      level: 'error',
      message: 'run failed',
      attrs: { error: 'sandbox broke' },
    });
  });

  test('the token budget stops the run in the step that crosses it', async () => {
    const { result } = runWorkflow({}, { maxTokens: 40 });
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'budget',
      error: 'token budget exceeded: 45 tokens used, the budget is 40',
      tokens: { prompt: 30, completion: 15, cached: 0, reasoning: 0 },
    });
    expect(moves(done.transitions).at(-1)).toBe('TESTING>FAILED');
  });

  test('the token budget is not crossed by a run that uses exactly it', async () => {
    const { result } = runWorkflow({}, { maxTokens: 45 });
    expect((await result).state).toBe('SUCCESS');
  });

  test('the cost budget stops the run in the step that crosses it', async () => {
    const { result } = runWorkflow({}, { maxCostUsd: 0.5 });
    const done = await result;
    expect(done).toMatchObject({
      state: 'FAILED',
      reason: 'budget',
      error: 'cost budget exceeded: $0.7500 spent, the budget is $0.5',
      cost: { usd: 0.75, byAgent: { planner: 0.25, coder: 0.25, tester: 0.25, reflector: 0 } },
    });
  });

  test('a model without a price: no cost; cached and reasoning tokens added up', async () => {
    const { result } = runWorkflow({
      step: () => ({ usd: null, usage: { prompt: 10, completion: 5, cached: 3, reasoning: 2 } }),
    });
    const done = await result;
    expect(done.cost).toBeNull();
    expect(done.tokens).toEqual({ prompt: 30, completion: 15, cached: 9, reasoning: 6 });
  });
});
