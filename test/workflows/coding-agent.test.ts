/**
 * Every branch of the run's state machine, with stub activities in place of the model, the
 * sandbox and failure memory: the workflow code alone, on a real Temporal dev server.
 */
import { readRunResult } from '../../src/shared/run-failure';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities';
import type { AgentStepInput, AgentStepOutcome } from '../../src/activities/agent-activities';
import type { OpenTurnInput } from '../../src/agents/agent-turn';
import type {
  CheckTargetsInput,
  RunSetupInput,
  RunTestsInput,
  TestRunSummary,
} from '../../src/activities/test-activities';
import type { TargetResult } from '../../src/shared/targets';
import type { PrepareRunInput, PreparedRun } from '../../src/activities/repo-activities';
import type { CloseRunInput, CommitTurnInput } from '../../src/activities/workspace-activities';
import {
  DEFAULT_RUN_OPTIONS,
  type RunInput,
  type RunOptions,
  type RunPlace,
  type RunResult,
  type RunSnapshot,
} from '../../src/shared/run-types';
import type { TurnFinish } from '../../src/shared/types';
import { startDevServerOnFreePorts } from '../../src/temporal/dev-server';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { codingAgentWorkflow } from '../../src/workflows';
import {
  extendUpdate,
  feedbackUpdate,
  pauseSignal,
  resumeSignal,
  stateQuery,
} from '../../src/workflows/signals';
import { getTestTemporal } from '../helpers/temporal-env';
import { until } from '../helpers/until';

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** What a stub model step answers: finish the turn, call tools, or do nothing. */
type StepAnswer = Partial<AgentStepOutcome>;

interface RunScript {
  /** Answers for a turn (`planner`, `coder-2`, `tester-1`, `reflector-1`) by step index. */
  step?: (turnKey: string, stepIndex: number, input: AgentStepInput) => StepAnswer | Promise<StepAnswer>;
  /** Passed tests of each attempt; all pass when omitted. */
  tests?: (attempt: number) => Partial<TestRunSummary> | Promise<Partial<TestRunSummary>>;
  /** What checkTargets answers; every target found and failing when omitted. */
  checkTargets?: (input: CheckTargetsInput) => { targets: TargetResult[]; unknown: string[] };
  /** The run's first host's task queues (default: the stub worker's queue) and whether it can move. */
  host?: { queue: string; movable: boolean };
}

interface RunLog {
  /** Each model step's input; a turn's first step also carries the turn's opening, logged with it. */
  steps: Array<{ turnKey: string; stepIndex: number; input: AgentStepInput & { open?: OpenTurnInput } }>;
  /** Tool calls run on the host's queue, by tool. */
  tools: string[];
  testRuns: number[];
  /** The targets each test run was asked to judge, by attempt (0: the baseline). */
  testTargets: Array<string[] | undefined>;
  checkedTargets: CheckTargetsInput[];
  memory: Array<{ kind: string; input: unknown }>;
  /** The places each adoption was asked to take over from. */
  adoptions: Array<{ place: RunPlace; headCommit: string }>;
  /** Setup commands run, and on which queue. */
  setups: string[];
}

const scripts = new Map<string, RunScript>();
const opens = new Map<string, OpenTurnInput>();
const logs = new Map<string, RunLog>();

function logOf(workflowId: string): RunLog {
  let log = logs.get(workflowId);
  if (!log) {
    log = {
      steps: [],
      tools: [],
      testRuns: [],
      testTargets: [],
      checkedTargets: [],
      memory: [],
      adoptions: [],
      setups: [],
    };
    logs.set(workflowId, log);
  }
  return log;
}

const current = () => {
  const id = Context.current().info.workflowExecution!.workflowId;
  return { script: scripts.get(id) ?? {}, log: logOf(id) };
};

const FINISHES: Record<string, TurnFinish> = {
  planner: { tool: 'submit_plan', plan: { summary: 'plan', steps: ['write it'], files: ['a.py'] } },
  coder: { tool: 'finish', summary: 'wrote a.py' },
  tester: { tool: 'finish', summary: 'wrote tests' },
  reflector: {
    tool: 'submit_analysis',
    analysis: {
      rootCause: 'off by one',
      fixHypothesis: 'add one',
      filesToChange: ['a.py'],
      testsWrong: false,
    },
  },
};

/** Every step costs 10 + 5 tokens and $0.002 unless its answer says otherwise. */
function decision(answer: StepAnswer): AgentStepOutcome {
  return {
    toolCalls: [],
    finished: null,
    progress: true,
    usage: { prompt: 10, completion: 5 },
    note: null,
    usd: 0.002,
    ...answer,
  };
}

const toolStub = (name: string) => async () => {
  current().log.tools.push(name);
  return { ok: true };
};

const memoryStub = (kind: string) => async (input: unknown) => {
  current().log.memory.push({ kind, input });
  return 0;
};

const stubActivities = {
  prepareWorkspace: async () => ({ protectedPaths: [] }),
  prepareRun: async (input: PrepareRunInput): Promise<PreparedRun> => ({
    place: {
      workflowId: input.workflowId,
      branch: `aca/${input.workflowId}`,
      disk: 'first',
      gitDir: '/nonexistent/git',
      commonDir: '/nonexistent/git',
      workTree: input.workspace ?? '/nonexistent/stub-workspace',
    },
    baseCommit: 'base',
    startCommit: input.start?.commit ?? 'base',
    testSetup: {
      command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
      dependencies: [],
      limits: {},
    },
    setupCommand: input.setupCommand,
    runCommand: true,
    queues: {
      disk: 'first',
      host: current().script.host?.queue ?? TASK_QUEUE,
      tests: current().script.host?.queue ?? TASK_QUEUE,
    },
    movable: current().script.host?.movable ?? false,
  }),
  async adoptRun(input: { place: RunPlace; headCommit: string }) {
    current().log.adoptions.push(input);
    const workTree = '/nonexistent/adopted-workspace';
    const gitDir = '/nonexistent/adopted-git';
    return {
      place: { ...input.place, disk: 'adopter', gitDir, commonDir: gitDir, workTree },
      queues: { disk: 'adopter', host: TASK_QUEUE, tests: TASK_QUEUE },
    };
  },
  hostAlive: async () => 'stub',
  openTurn: async (input: { open: OpenTurnInput }) => {
    opens.set(input.open.ref, input.open);
    return { ref: input.open.ref };
  },
  commitTurn: async (input: CommitTurnInput) => `commit of ${input.message}`,
  closeRun: async (input: CloseRunInput) => ({
    files: input.listFiles ? ['a.py'] : null,
    changedFiles: [{ path: 'a.py', status: 'added' as const, added: 1, removed: 0 }],
  }),
  runSetup: async (input: RunSetupInput) => {
    current().log.setups.push(`${input.command} in ${input.place.workTree}`);
    return { ok: true, outcome: 'completed', message: null, outputTail: '' };
  },
  async agentStep(input: AgentStepInput): Promise<AgentStepOutcome> {
    const { script, log } = current();
    const turnKey = input.ref.split('/').pop()!;
    // The turn's opening (its own activity, on the run's host) is logged with its first step.
    const open = input.stepIndex === 0 ? opens.get(input.ref) : undefined;
    log.steps.push({ turnKey, stepIndex: input.stepIndex, input: open ? { ...input, open } : input });
    const answer = script.step ? await script.step(turnKey, input.stepIndex, input) : {};
    const role = turnKey.replace(/-\d+$/, '');
    return decision(
      'finished' in answer || 'toolCalls' in answer ? answer : { ...answer, finished: FINISHES[role] },
    );
  },
  list_files: toolStub('list_files'),
  read_file: toolStub('read_file'),
  create_file: toolStub('create_file'),
  edit_file: toolStub('edit_file'),
  search_files: toolStub('search_files'),
  delete_file: toolStub('delete_file'),
  async checkTargets(input: CheckTargetsInput) {
    const { script, log } = current();
    log.checkedTargets.push(input);
    return script.checkTargets
      ? script.checkTargets(input)
      : { targets: input.targets.map((id) => ({ id, outcome: 'failed' as const })), unknown: [] };
  },
  async runTests(input: RunTestsInput): Promise<TestRunSummary> {
    const { script, log } = current();
    log.testRuns.push(input.attempt);
    log.testTargets.push(input.targets);
    const outcome = script.tests ? await script.tests(input.attempt) : {};
    const passed = outcome.passed ?? 2;
    const failed = outcome.failed ?? 0;
    return {
      outcome: 'completed',
      passed,
      failed,
      errors: 0,
      passRate: passed / Math.max(1, passed + failed),
      message: null,
      reportRef: `report-${input.attempt}`,
      durationMs: 1,
      sandboxWarning: null,
      success: failed === 0 && passed > 0,
      regressions: [],
      regressionCount: 0,
      ...outcome,
    };
  },
  rememberRun: memoryStub('run'),
  rememberAttempt: memoryStub('attempt'),
  rememberOutcome: memoryStub('outcome'),
  // A coding run never evaluates: the batch's activities (see eval-batch.test.ts).
  evalRunInput: notCalled('evalRunInput'),
  evaluateEvalInstance: notCalled('evaluateEvalInstance'),
  writeEvalOutputs: notCalled('writeEvalOutputs'),
  recordEvalError: notCalled('recordEvalError'),
  evalTestsQueue: notCalled('evalTestsQueue'),
  evalInstanceIds: notCalled('evalInstanceIds'),
  // No agent of these runs is offered run_command.
  runCommand: notCalled('runCommand'),
} satisfies Record<keyof Activities, unknown>;

function notCalled(name: string): () => Promise<never> {
  return () => Promise.reject(new Error(`${name} is not a coding run's activity`));
}

/** A promise with its resolve function, for holding a stub activity until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const failingTests = { passed: 1, failed: 1 };

let counter = 0;
const TASK_QUEUE = `stub-activities-${process.pid}`;

function runInput(options: Partial<RunOptions> = {}, more: Partial<RunInput> = {}): RunInput {
  return {
    task: 'Write a.py',
    language: 'python',
    workspace: '/nonexistent/stub-workspace',
    testsDir: null,
    model: 'stub',
    options: { ...DEFAULT_RUN_OPTIONS, maxIterations: 3, warnAt: 3, ...options },
    repo: null,
    testCommand: null,
    setupCommand: null,
    setupNetwork: false,
    link: null,
    ...more,
  };
}

const bundles = new Map<string, ReturnType<typeof bundleWorkflowCode>>();

/** Webpack takes seconds: each workflows file is bundled once for the whole file's workers. */
function bundle(workflowsPath: string): ReturnType<typeof bundleWorkflowCode> {
  let built = bundles.get(workflowsPath);
  if (!built) {
    built = bundleWorkflowCode({ workflowsPath, logger: quietLogger });
    bundles.set(workflowsPath, built);
  }
  return built;
}

describe('the run state machine with stub activities', () => {
  let connection: NativeConnection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    const temporal = getTestTemporal();
    connection = await NativeConnection.connect({ address: temporal.address });
    client = new Client({
      connection: await Connection.connect({ address: temporal.address }),
      namespace: temporal.namespace,
    });
    worker = await Worker.create({
      connection,
      namespace: temporal.namespace,
      taskQueue: TASK_QUEUE,
      workflowBundle: await bundle(require.resolve('./forbidden-move')),
      activities: stubActivities,
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await client?.connection.close();
    await connection?.close();
  });

  async function started(script: RunScript, options: Partial<RunOptions> = {}, more: Partial<RunInput> = {}) {
    const workflowId = `stub-${process.pid}-${++counter}`;
    scripts.set(workflowId, script);
    return client.workflow.start(codingAgentWorkflow, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [runInput(options, more)],
    });
  }

  const moves = (result: RunResult) => result.transitions.map((t) => `${t.from}>${t.to}`);

  /**
   * The id of the first workflow task completed after the activity of `type` held during a pause completed:
   * the task in which the workflow took that result in and decided what to do next.
   */
  async function workflowTaskAfterCompletion(handle: WorkflowHandle, type: string): Promise<number> {
    let found = 0;
    await until(
      async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        const typeOf = new Map(
          events
            .filter((e) => e.activityTaskScheduledEventAttributes)
            .map((e) => [Number(e.eventId), e.activityTaskScheduledEventAttributes!.activityType?.name]),
        );
        const completed = events.filter(
          (e) =>
            e.activityTaskCompletedEventAttributes &&
            typeOf.get(Number(e.activityTaskCompletedEventAttributes.scheduledEventId)) === type,
        );
        // The held one: the first of its type to complete after the pause signal arrived.
        const paused = events.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'pause');
        const last = completed.find((e) => paused && Number(e.eventId) > Number(paused.eventId));
        if (!last) return false;
        const task = events.find(
          (e) => Number(e.eventId) > Number(last.eventId) && e.workflowTaskCompletedEventAttributes,
        );
        found = task ? Number(task.eventId) : 0;
        return found > 0;
      },
      20_000,
      `the held ${type} to complete`,
    );
    return found;
  }

  /** Activities scheduled after the given event: none while a run is paused. */
  async function scheduledSince(handle: WorkflowHandle, afterEventId: number): Promise<number> {
    const history = await handle.fetchHistory();
    return (history.events ?? []).filter(
      (e) => Number(e.eventId) > afterEventId && e.activityTaskScheduledEventAttributes,
    ).length;
  }

  test('success at the first attempt', async () => {
    const handle = await started({
      step: (turnKey, stepIndex) =>
        turnKey === 'coder-1' && stepIndex === 0
          ? { toolCalls: [{ kind: 'file' as const, id: 'c1', name: 'create_file' as const, target: 'a.py' }] }
          : {},
    });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      reason: null,
      iterations: 1,
      passRate: 1,
      files: ['a.py'],
    });
    expect(moves(result)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>TESTING', 'TESTING>SUCCESS']);
    const log = logOf(handle.workflowId);
    expect(log.tools).toEqual(['create_file']);
    expect(log.steps.map((s) => s.turnKey)).toEqual(['planner', 'coder-1', 'coder-1', 'tester-1']);
    expect(log.steps[0]!.input.open?.recallLessons).toEqual({
      workflowId: handle.workflowId,
      task: 'Write a.py',
    });
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'outcome']);
    expect(log.memory[1]!.input).toMatchObject({
      status: 'success',
      fix: null,
      lastAttempt: { iteration: 1, passRate: 1 },
    });
    // Four model steps of 10 + 5 tokens: the Planner, two of the Coder, the Tester.
    expect(result.tokens).toEqual({ prompt: 40, completion: 20, cached: 0, reasoning: 0 });
  });

  test("tool calls, turn openings and turn commits are activities of the host's queue, one job each", async () => {
    const calls = (turnKey: string, stepIndex: number): StepAnswer =>
      turnKey === 'coder-1' && stepIndex === 0
        ? {
            toolCalls: [
              { kind: 'file' as const, id: 'c1', name: 'create_file' as const, target: 'a.py' },
              { kind: 'file' as const, id: 'c2', name: 'read_file' as const, target: 'a.py' },
            ],
          }
        : {};
    for (const host of [undefined, { queue: TASK_QUEUE, movable: true }]) {
      const handle = await started({ step: calls, ...(host ? { host } : {}) });
      expect(await readRunResult(handle)).toMatchObject({ state: 'SUCCESS', iterations: 1 });
      expect(logOf(handle.workflowId).tools).toEqual(['create_file', 'read_file']);
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.markerRecordedEventAttributes)).toEqual([]);
      expect(
        events.flatMap((e) =>
          e.activityTaskScheduledEventAttributes
            ? [e.activityTaskScheduledEventAttributes.activityType!.name]
            : [],
        ),
      ).toEqual([
        'prepareRun',
        'prepareWorkspace',
        'openTurn',
        'agentStep',
        'rememberRun',
        'openTurn',
        'agentStep',
        'create_file',
        'read_file',
        'agentStep',
        'commitTurn',
        'openTurn',
        'agentStep',
        'commitTurn',
        'runTests',
        'closeRun',
        'rememberOutcome',
      ]);
    }
  });

  test('without failure memory (--no-failure-memory, every run of aca eval): no lessons asked for, nothing stored', async () => {
    const handle = await started(
      { tests: (attempt) => (attempt === 1 ? failingTests : {}) },
      {},
      { failureMemory: false },
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    const log = logOf(handle.workflowId);
    expect(log.steps[0]!.input.open?.recallLessons).toBeUndefined();
    expect(log.memory).toEqual([]);
  });

  test('a host that takes no step within the start timeout: another adopts the run at the recorded commit and runs its setup again', async () => {
    const workflowId = `adopt-${++counter}`;
    // A host queue no worker polls: the host that prepared the run is gone.
    scripts.set(workflowId, { host: { queue: `gone-host-${workflowId}`, movable: true } });
    const handle = await client.workflow.start(codingAgentWorkflow, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [runInput({ hostStartTimeoutMs: 1_000 }, { setupCommand: 'pip install -e .' })],
    });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 1,
      workspace: '/nonexistent/adopted-workspace',
    });
    const log = logOf(workflowId);
    // The first host step (the setup command) never started: the run moved once, at the base commit.
    expect(log.adoptions).toHaveLength(1);
    expect(log.adoptions[0]).toMatchObject({
      headCommit: 'base',
      place: { branch: `aca/${workflowId}`, disk: 'first' },
    });
    // The setup step itself never started: it ran once, on the adopting host.
    expect(log.setups).toEqual(['pip install -e . in /nonexistent/adopted-workspace']);
    // Every later step went to the adopting host, with its paths.
    expect(result.place?.workTree).toBe('/nonexistent/adopted-workspace');
    expect(log.testRuns).toEqual([1]);
    const history = await handle.fetchHistory();
    const timedOut = (history.events ?? []).filter(
      (e) => e.activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo?.timeoutType === 2,
    );
    expect(timedOut.length).toBeGreaterThanOrEqual(1);
  });

  test('a run that cannot move (no git store) waits for its host however long it takes', async () => {
    const workflowId = `wait-${++counter}`;
    const queue = `late-host-${workflowId}`;
    scripts.set(workflowId, { host: { queue, movable: false } });
    const handle = await client.workflow.start(codingAgentWorkflow, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [runInput({ hostStartTimeoutMs: 1_000 })],
    });
    // Well past the start timeout, the host's first step is still waiting and nothing moved.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(logOf(workflowId).adoptions).toHaveLength(0);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const late = await Worker.create({
      connection,
      namespace: getTestTemporal().namespace,
      taskQueue: queue,
      activities: stubActivities,
    });
    const result = await late.runUntil(readRunResult(handle));
    expect(result).toMatchObject({ state: 'SUCCESS' });
    expect(logOf(workflowId).adoptions).toHaveLength(0);
  });

  test('a failed attempt is reflected on, and the next one passes with the analysis in hand', async () => {
    const handle = await started({ tests: (attempt) => (attempt === 1 ? failingTests : {}) });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 2,
      lastAnalysis: { rootCause: 'off by one' },
    });
    expect(moves(result)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
      'CODING>TESTING',
      'TESTING>SUCCESS',
    ]);
    const log = logOf(handle.workflowId);
    // The Tester wrote tests once: the analysis did not say they were wrong.
    expect(log.steps.map((s) => s.turnKey)).toEqual([
      'planner',
      'coder-1',
      'tester-1',
      'reflector-1',
      'coder-2',
    ]);
    expect(log.steps[4]!.input.open?.context).toMatchObject({
      attempt: 2,
      analysis: { fixHypothesis: 'add one' },
    });
    expect(log.steps[3]!.input.open?.context).toMatchObject({ testReportRef: 'report-1' });
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'attempt', 'outcome']);
    expect(log.memory[2]!.input).toMatchObject({
      status: 'success',
      fix: { iteration: 2, summary: expect.stringContaining('add one') },
    });
  });

  test('an analysis that says the tests are wrong sends the Tester back', async () => {
    const handle = await started({
      tests: (attempt) => (attempt === 1 ? failingTests : {}),
      step: (turnKey) =>
        turnKey === 'reflector-1'
          ? {
              finished: {
                tool: 'submit_analysis',
                analysis: {
                  rootCause: 'bad test',
                  fixHypothesis: 'fix test',
                  filesToChange: [],
                  testsWrong: true,
                },
              },
            }
          : {},
    });
    await readRunResult(handle);
    expect(logOf(handle.workflowId).steps.map((s) => s.turnKey)).toContain('tester-2');
  });

  test('the iteration limit ends the run FAILED with every attempt stored', async () => {
    const handle = await started({ tests: () => failingTests }, { maxIterations: 2, warnAt: 2 });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 2, passRate: 0.5 });
    expect(moves(result)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>FAILED',
    ]);
    const log = logOf(handle.workflowId);
    expect(log.testRuns).toEqual([1, 2]);
    expect(log.memory.map((m) => m.kind)).toEqual(['run', 'attempt', 'outcome']);
    expect(log.memory[2]!.input).toMatchObject({
      status: 'failed',
      reason: 'max_iterations',
      lastAttempt: { iteration: 2, analysis: { rootCause: 'off by one' } },
    });
  });

  test('the warning comes at warnAt', async () => {
    const handle = await started({ tests: () => failingTests }, { maxIterations: 3, warnAt: 2 });
    expect((await readRunResult(handle)).warning).toBe(
      'iteration 2 of 3: 1 attempts left before the run fails',
    );
  });

  test('the token budget stops the run in the step that crosses it', async () => {
    const handle = await started({}, { maxTokens: 40 });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'budget', iterations: 1 });
    expect(result.error).toBe('token budget exceeded: 45 tokens used, the budget is 40');
    expect(logOf(handle.workflowId).steps).toHaveLength(3);
    expect(moves(result)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>TESTING', 'TESTING>FAILED']);
  });

  test('the cost budget stops the run in the step that crosses it, with the cost per agent', async () => {
    const handle = await started({}, { maxCostUsd: 0.005 });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'budget', iterations: 1 });
    expect(result.error).toBe('cost budget exceeded: $0.0060 spent, the budget is $0.005');
    expect(logOf(handle.workflowId).steps.map((s) => s.input.model)).toEqual(['stub', 'stub', 'stub']);
    expect(result.cost!.usd).toBeCloseTo(0.006, 10);
    expect(result.cost!.byAgent.planner).toBeCloseTo(0.002, 10);
    expect(result.cost!.byAgent.coder).toBeCloseTo(0.002, 10);
    expect(result.cost!.byAgent.tester).toBeCloseTo(0.002, 10);
    expect(result.cost!.byAgent.reflector).toBe(0);
  });

  test('a model without a price gives no cost, and cached and reasoning tokens are counted apart', async () => {
    const handle = await started({
      step: () => ({ usd: null, usage: { prompt: 10, completion: 5, cached: 4, reasoning: 2 } }),
    });
    const result = await readRunResult(handle);
    expect(result.state).toBe('SUCCESS');
    expect(result.cost).toBeNull();
    expect(result.tokens).toEqual({ prompt: 30, completion: 15, cached: 12, reasoning: 6 });
  });

  test('a turn without its finishing call is recorded and the run goes on', async () => {
    const handle = await started(
      {
        step: (turnKey) =>
          turnKey === 'coder-1'
            ? { toolCalls: [{ kind: 'file' as const, id: `r`, name: 'read_file' as const, target: 'a.py' }] }
            : {},
      },
      { maxStepsPerTurn: 2 },
    );
    const result = await readRunResult(handle);
    expect(result.state).toBe('SUCCESS');
    expect(result.error).toBe('coder did not call its finishing tool within 2 steps');
  });

  test('a turn that makes no progress is ended before its step limit', async () => {
    const handle = await started(
      { step: (turnKey) => (turnKey === 'coder-1' ? { progress: false, toolCalls: [] } : {}) },
      { maxStepsPerTurn: 10 },
    );
    const result = await readRunResult(handle);
    expect(result.error).toBe('coder made no progress in 3 steps in a row (only failing calls or no calls)');
    expect(logOf(handle.workflowId).steps.filter((s) => s.turnKey === 'coder-1')).toHaveLength(3);
  });

  test('a permanent activity failure ends the run FAILED with reason error', async () => {
    const handle = await started({
      tests: () => {
        throw ApplicationFailure.nonRetryable('bubblewrap is missing', 'SandboxUnavailable');
      },
    });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'error', error: 'bubblewrap is missing' });
    expect(moves(result)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>TESTING', 'TESTING>FAILED']);
    expect(logOf(handle.workflowId).memory.map((m) => m.kind)).toEqual(['run', 'outcome']);
  });

  test('a run that ends FAILED fails its workflow, with the reason in the message and the RunResult as details', async () => {
    const handle = await started({}, { maxTokens: 40 });
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('AcaRunFailed');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toBe(
      'FAILED budget after 1 of at most 3 iterations, pass rate -: token budget exceeded: 45 tokens used, the budget is 40',
    );
    expect(cause.details?.[0]).toMatchObject({ state: 'FAILED', reason: 'budget', iterations: 1 });
    expect(await readRunResult(handle)).toEqual(cause.details?.[0]);
    expect((await handle.describe()).status.name).toBe('FAILED');
  });

  test('a run that ends SUCCESS completes its workflow with the RunResult', async () => {
    const handle = await started({});
    expect(await handle.result()).toMatchObject({ state: 'SUCCESS', reason: null });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });

  test('cancel during a model call ends the run FAILED cancelled, its memory still written', async () => {
    const held = gate();
    const handle = await started({
      step: async (turnKey) => (turnKey === 'coder-1' ? held.promise.then(() => ({})) : {}),
    });
    await until(
      () => logOf(handle.workflowId).steps.some((s) => s.turnKey === 'coder-1'),
      20_000,
      'the Coder step',
    );
    await handle.cancel();
    const result = await readRunResult(handle);
    held.open();
    expect(result).toMatchObject({ state: 'FAILED', reason: 'cancelled', error: 'the run was cancelled' });
    // Cancelled is FAILED in aca's words: Temporal and its Web UI list the run as failed too.
    expect((await handle.describe()).status.name).toBe('FAILED');
    expect(moves(result)).toEqual(['INIT>PLANNING', 'PLANNING>CODING', 'CODING>FAILED']);
    expect(logOf(handle.workflowId).memory.map((m) => m.kind)).toEqual(['run', 'outcome']);
  });

  for (const where of ['a model call', 'a test run'] as const) {
    test(`pause during ${where}: it finishes, nothing new starts, resume goes on`, async () => {
      const held = gate();
      const script: RunScript =
        where === 'a model call'
          ? { step: async (turnKey) => (turnKey === 'coder-1' ? held.promise.then(() => ({})) : {}) }
          : { tests: async () => held.promise.then(() => ({})) };
      const handle = await started(script);
      const log = logOf(handle.workflowId);
      await until(
        () =>
          where === 'a model call' ? log.steps.some((s) => s.turnKey === 'coder-1') : log.testRuns.length > 0,
        20_000,
        where,
      );
      await handle.signal(pauseSignal);
      expect((await handle.query(stateQuery)).state).toBe('PAUSED');
      held.open();
      // Wait until the workflow has taken the held activity's result in, then check that the
      // workflow task that did so scheduled nothing new.
      const heldType = where === 'a model call' ? 'agentStep' : 'runTests';
      const lastTask = await workflowTaskAfterCompletion(handle, heldType);
      const snapshot = await handle.query(stateQuery);
      expect(snapshot).toMatchObject({ state: 'PAUSED', paused: true });
      expect(await scheduledSince(handle, lastTask)).toBe(0);
      const stepsWhilePaused = log.steps.length;
      // Not even the ending starts while paused: the outcome is not stored yet.
      expect(log.memory.map((m) => m.kind)).toEqual(['run']);
      await handle.signal(resumeSignal);
      const result = await readRunResult(handle);
      expect(result.state).toBe('SUCCESS');
      // After the held model call, the Tester's turn still had to run once resumed.
      if (where === 'a model call') expect(log.steps.length).toBeGreaterThan(stepsWhilePaused);
      // One move into the pause and one out, into the phase the run had reached underneath it
      // (after the held model call, the Coder's turn still has its commit step to take: CODING):
      // nothing recorded twice.
      expect(moves(result)).toEqual(
        where === 'a model call'
          ? [
              'INIT>PLANNING',
              'PLANNING>CODING',
              'CODING>PAUSED',
              'PAUSED>CODING',
              'CODING>TESTING',
              'TESTING>SUCCESS',
            ]
          : [
              'INIT>PLANNING',
              'PLANNING>CODING',
              'CODING>TESTING',
              'TESTING>PAUSED',
              'PAUSED>TESTING',
              'TESTING>SUCCESS',
            ],
      );
    });
  }

  test('feedback reaches the next Coder only; empty, oversized and late feedback is refused', async () => {
    const held = gate();
    const handle = await started({
      tests: (attempt) => (attempt < 3 ? failingTests : {}),
      step: async (turnKey) => (turnKey === 'coder-1' ? held.promise.then(() => ({})) : {}),
    });
    await until(
      () => logOf(handle.workflowId).steps.some((s) => s.turnKey === 'coder-1'),
      20_000,
      'the Coder step',
    );
    await expect(handle.executeUpdate(feedbackUpdate, { args: ['   '] })).rejects.toThrow();
    await expect(handle.executeUpdate(feedbackUpdate, { args: ['x'.repeat(5000)] })).rejects.toThrow();
    expect(await handle.executeUpdate(feedbackUpdate, { args: ['  use integers  '] })).toEqual({
      accepted: true,
      pending: 1,
    });
    held.open();
    const result = await readRunResult(handle);
    expect(result.state).toBe('SUCCESS');
    // Each Coder turn's feedback, in order: given during the first, it reaches the second only.
    const coderOpens = logOf(handle.workflowId).steps.filter((s) => s.input.open?.context.role === 'coder');
    expect(coderOpens.map((s) => [s.turnKey, s.input.open?.context.feedback])).toEqual([
      ['coder-1', []],
      ['coder-2', ['use integers']],
      ['coder-3', []],
    ]);
    await expect(handle.executeUpdate(feedbackUpdate, { args: ['too late'] })).rejects.toThrow();
  });

  const waitingAtLimit = async (handle: { query: (q: typeof stateQuery) => Promise<RunSnapshot> }) => {
    let last: RunSnapshot | null = null;
    await until(
      async () => {
        last = await handle.query(stateQuery);
        return last.waiting === 'limit';
      },
      20_000,
      'the run waiting at its limit',
    );
    return last!;
  };

  test('--on-limit ask: the run waits at its limit; extend gives it more attempts and feedback', async () => {
    const handle = await started(
      { tests: (attempt) => (attempt === 1 ? failingTests : {}) },
      { maxIterations: 1, warnAt: 1, onLimit: 'ask' },
    );
    const waiting = await waitingAtLimit(handle);
    expect(waiting).toMatchObject({ state: 'REFLECTING', iterations: 1, maxIterations: 1 });
    // Feedback while waiting is kept for the Coder turn after the extension.
    await handle.executeUpdate(feedbackUpdate, { args: ['check the edge case'] });
    await expect(handle.executeUpdate(extendUpdate, { args: [{ iterations: 0 }] })).rejects.toThrow();
    await expect(handle.executeUpdate(extendUpdate, { args: [{ iterations: 1.5 }] })).rejects.toThrow();
    expect(
      await handle.executeUpdate(extendUpdate, { args: [{ iterations: 2, feedback: 'use integers' }] }),
    ).toEqual({ maxIterations: 3 });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2, maxIterations: 3 });
    expect(result).not.toHaveProperty('waiting');
    const coder2 = logOf(handle.workflowId).steps.find((s) => s.turnKey === 'coder-2')!;
    expect(coder2.input.open?.context.feedback).toEqual(['check the edge case', 'use integers']);
    expect(coder2.input.open?.context.maxIterations).toBe(3);
    await expect(handle.executeUpdate(extendUpdate, { args: [{ iterations: 1 }] })).rejects.toThrow();
  });

  test('--on-limit ask: a wait nobody answers ends FAILED max_iterations when its timer fires', async () => {
    const started_ = Date.now();
    const handle = await started(
      { tests: () => failingTests },
      { maxIterations: 1, warnAt: 1, onLimit: 'ask', askTimeoutMs: 2_000 },
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 1 });
    expect(Date.now() - started_).toBeGreaterThanOrEqual(2_000);
    const timers = (await handle.fetchHistory()).events!.filter((e) => e.timerStartedEventAttributes);
    expect(timers).toHaveLength(1);
  });

  test('extend is refused by a run that is not waiting at its limit', async () => {
    const held = gate();
    const handle = await started({ step: async () => held.promise.then(() => ({})) }, { onLimit: 'ask' });
    await until(() => logOf(handle.workflowId).steps.length > 0, 20_000, 'the first step');
    const refused = await handle
      .executeUpdate(extendUpdate, { args: [{ iterations: 1 }] })
      .catch((err: unknown) => err);
    held.open();
    expect(((refused as Error).cause as Error).message).toBe('the run is not waiting at its iteration limit');
    expect((await readRunResult(handle)).state).toBe('SUCCESS');
  });

  const TARGET = 'tests/test_more.py::LastTests::test_basic';
  const repoRun = (targets?: string[]): Partial<RunInput> => ({
    repo: { path: '/nonexistent/repo', baseCommit: 'base' },
    ...(targets ? { targets } : {}),
  });
  /** The case of the issue: the target failed at the baseline, so its failure alone is excused. */
  const targetRun =
    (passesAt: number) =>
    (attempt: number): Partial<TestRunSummary> =>
      attempt === 0
        ? {
            passed: 736,
            failed: 1,
            success: false,
            targets: [{ id: TARGET, outcome: 'failed' }],
            failingTests: [TARGET],
          }
        : attempt < passesAt
          ? {
              passed: 737,
              failed: 1,
              success: true,
              targets: [{ id: TARGET, outcome: 'failed' }],
              failingTests: [TARGET],
            }
          : {
              passed: 738,
              failed: 0,
              success: true,
              targets: [{ id: TARGET, outcome: 'passed' }],
              failingTests: [],
            };

  test('a target that failed at the baseline is never excused: a passing run with it failing ends FAILED', async () => {
    const handle = await started(
      { tests: targetRun(99) },
      { maxIterations: 1, warnAt: 1 },
      repoRun([TARGET]),
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      iterations: 1,
      baseline: { passed: 736, failed: 1 },
      tests: { passed: 737, failed: 1, errors: 0 },
      targets: [{ id: TARGET, outcome: 'failed' }],
      failingTests: [TARGET],
      unknownTargets: [],
    });
    expect(moves(result)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>FAILED',
    ]);
    const log = logOf(handle.workflowId);
    expect(log.testRuns).toEqual([0, 1]);
    expect(log.testTargets).toEqual([[TARGET], [TARGET]]);
    expect(log.steps.find((s) => s.turnKey === 'coder-1')!.input.open?.context.targets).toEqual([
      { id: TARGET, outcome: 'failed' },
    ]);
    expect(log.steps.find((s) => s.turnKey === 'reflector-1')!.input.open?.context.targets).toEqual([
      { id: TARGET, outcome: 'failed' },
    ]);
  });

  test('the run succeeds once every target passes', async () => {
    const handle = await started({ tests: targetRun(2) }, {}, repoRun([TARGET]));
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 2,
      passRate: 1,
      targets: [{ id: TARGET, outcome: 'passed' }],
      failingTests: [],
    });
    expect(moves(result)).toEqual([
      'INIT>PLANNING',
      'PLANNING>CODING',
      'CODING>TESTING',
      'TESTING>REFLECTING',
      'REFLECTING>CODING',
      'CODING>TESTING',
      'TESTING>SUCCESS',
    ]);
    expect(logOf(handle.workflowId).testTargets).toEqual([[TARGET], [TARGET], [TARGET]]);
  });

  test('a target no test of the base commit belongs to ends the run before any model call', async () => {
    const nope = 'tests/test_more.py::LastTests::test_nope';
    const handle = await started(
      {
        tests: () => ({
          passed: 736,
          failed: 1,
          success: false,
          targets: [
            { id: TARGET, outcome: 'failed' },
            { id: nope, outcome: 'missing' },
          ],
          unknownTargets: [nope],
        }),
      },
      {},
      repoRun([TARGET, nope]),
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      iterations: 0,
      unknownTargets: [nope],
      targets: [
        { id: TARGET, outcome: 'failed' },
        { id: nope, outcome: 'missing' },
      ],
      error: `no such test: ${nope} (a target must name a test or test file that exists at the base commit; 737 tests ran there)`,
    });
    expect(moves(result)).toEqual(['INIT>FAILED']);
    const log = logOf(handle.workflowId);
    expect(log.steps).toEqual([]);
    expect(log.testRuns).toEqual([0]);
    expect(log.memory).toEqual([]);
  });

  test('a baseline that cannot run stops the run before the Planner, reason environment, nothing remembered', async () => {
    const diagnosis =
      'the tests cannot run on the base commit: the command exited with code 127 before running any test\ncommand: nosuchrunner\nlast output:\nsh: 1: nosuchrunner: not found';
    const handle = await started(
      { tests: () => ({ outcome: 'collection_error', success: false, passed: 0, cannotRun: diagnosis }) },
      {},
      repoRun(),
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'environment', iterations: 0, error: diagnosis });
    expect(moves(result)).toEqual(['INIT>FAILED']);
    const log = logOf(handle.workflowId);
    expect(log.steps).toEqual([]);
    expect(log.testRuns).toEqual([0]);
    expect(log.memory).toEqual([]);
  });

  test('a baseline that did not complete does not declare targets unknown', async () => {
    const handle = await started(
      {
        tests: (attempt) =>
          attempt === 0
            ? { outcome: 'collection_error', success: false, unknownTargets: [TARGET] }
            : { targets: [{ id: TARGET, outcome: 'passed' }] },
      },
      {},
      repoRun([TARGET]),
    );
    expect(await readRunResult(handle)).toMatchObject({
      state: 'SUCCESS',
      unknownTargets: [],
      targets: [{ id: TARGET, outcome: 'passed' }],
    });
  });

  test('targets the Planner names: one that exists joins the run, another goes to the Coder as a note', async () => {
    const named = 'tests/test_a.py::test_named';
    const nope = 'tests/test_a.py::test_nope';
    const handle = await started(
      {
        step: (turnKey) =>
          turnKey === 'planner'
            ? {
                finished: {
                  tool: 'submit_plan',
                  plan: { summary: 'plan', steps: ['fix'], files: [], targets: [named, nope, TARGET] },
                },
              }
            : {},
        checkTargets: () => ({
          targets: [
            { id: named, outcome: 'failed' },
            { id: nope, outcome: 'missing' },
          ],
          unknown: [nope],
        }),
        tests: (attempt) =>
          attempt === 0
            ? { success: false, targets: [{ id: TARGET, outcome: 'failed' }] }
            : {
                success: true,
                targets: [
                  { id: TARGET, outcome: 'passed' },
                  { id: named, outcome: attempt === 1 ? 'failed' : 'passed' },
                ],
              },
      },
      {},
      repoRun([TARGET]),
    );
    const result = await readRunResult(handle);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 2,
      targets: [
        { id: TARGET, outcome: 'passed' },
        { id: named, outcome: 'passed' },
      ],
      unknownTargets: [],
    });
    const log = logOf(handle.workflowId);
    // Only the targets the run did not have yet are looked for, in the baseline's report.
    expect(log.checkedTargets).toEqual([{ reportRef: 'report-0', targets: [named, nope] }]);
    expect(log.testTargets).toEqual([[TARGET], [TARGET, named], [TARGET, named]]);
    const coder1 = log.steps.find((s) => s.turnKey === 'coder-1')!.input.open!.context;
    expect(coder1.plan?.targets).toEqual([named]);
    expect(coder1.notes).toEqual([
      `The plan named a target test that does not exist: ${nope}. The run does not require it; the targets it requires are ${TARGET} failed, ${named} failed.`,
    ]);
    const coder2 = log.steps.find((s) => s.turnKey === 'coder-2')!.input.open!.context;
    expect(coder2.notes).toBeUndefined();
  });

  test('without a baseline, a target the Planner names must be one of the acceptance files', async () => {
    const handle = await started({
      step: (turnKey) =>
        turnKey === 'planner'
          ? {
              finished: {
                tool: 'submit_plan',
                plan: { summary: 'plan', steps: [], files: [], targets: ['tests/test_a.py', '/etc/passwd'] },
              },
            }
          : {},
    });
    const result = await readRunResult(handle);
    expect(result).toMatchObject({ state: 'SUCCESS', targets: [] });
    const log = logOf(handle.workflowId);
    expect(log.checkedTargets).toEqual([]);
    expect(log.testTargets).toEqual([undefined]);
    expect(log.steps.find((s) => s.turnKey === 'coder-1')!.input.open!.context.notes).toEqual([
      'The plan named target tests that do not exist: tests/test_a.py, /etc/passwd. The run does not require them; the targets it requires are none.',
    ]);
  });

  test('a move the state table forbids fails the run with a message naming both states', async () => {
    const handle = await client.workflow.start('forbiddenMoveWorkflow', {
      workflowId: `stub-${process.pid}-${++counter}`,
      taskQueue: TASK_QUEUE,
      args: [],
    });
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('ForbiddenStateMove');
    expect(cause.message).toBe(
      'the run cannot move from PLANNING to TESTING: the state table does not allow it',
    );
    expect(cause.nonRetryable).toBe(true);
  });

  test('a run handed an ended state refuses to run it', async () => {
    const workflowId = `stub-${process.pid}-${++counter}`;
    const ended = {
      machine: { phase: 'SUCCESS' as const, paused: false, transitions: [] },
      record: {
        workflowId,
        reason: null,
        iterations: 1,
        maxIterations: 3,
        passRate: 1,
        tests: { passed: 1, failed: 0, errors: 0 },
        workspace: '/x',
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
        attempts: [],
        cost: null,
        parentRun: null,
        place: null,
        testCommand: null,
        targets: [],
        failingTests: [],
        unknownTargets: [],
      },
      work: {
        plan: null,
        testsNeeded: false,
        testPass: 1,
        protectedPaths: [],
        pendingFeedback: [],
        lastCoderSummary: null,
        failedAttempt: null,
        testSetup: null,
        baselineRef: null,
        taskRemembered: true,
        extension: null,
        host: null,
        preparedOn: null,
        movable: false,
        acceptanceCommit: null,
        setupCommand: null,
        runCommand: true,
      },
    };
    const handle = await client.workflow.start(codingAgentWorkflow, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [runInput(), ended],
    });
    const failure = await handle.result().catch((err: unknown) => err);
    expect(((failure as WorkflowFailedError).cause as ApplicationFailure).message).toBe(
      'the run has already ended SUCCESS',
    );
  });
});

describe('continue-as-new with stub activities', () => {
  test('a run continues as new when suggested and carries plan, feedback and progress', async () => {
    const cliPath = findTemporalCli();
    if (!cliPath) throw new Error('no Temporal CLI: the global setup should have provided one');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-stub-can-'));
    const server = await startDevServerOnFreePorts({
      cliPath,
      dbFile: path.join(dir, 'temporal.db'),
      headless: true,
      extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=40'],
    });
    const clientConnection = await Connection.connect({ address: server.address });
    const connection = await NativeConnection.connect({ address: server.address });
    try {
      await registerSearchAttributes(clientConnection, 'default');
      const client = new Client({ connection: clientConnection });
      const worker = await Worker.create({
        connection,
        taskQueue: TASK_QUEUE,
        workflowBundle: await bundle(require.resolve('./forbidden-move')),
        activities: stubActivities,
      });
      await worker.runUntil(async () => {
        const workflowId = `stub-can-${process.pid}`;
        const held = gate();
        scripts.set(workflowId, {
          tests: (attempt) => (attempt < 4 ? failingTests : {}),
          step: async (turnKey) => (turnKey === 'coder-1' ? held.promise.then(() => ({})) : {}),
        });
        const handle = await client.workflow.start(codingAgentWorkflow, {
          workflowId,
          taskQueue: TASK_QUEUE,
          args: [runInput({ maxIterations: 5, warnAt: 5 })],
        });
        await until(
          () => logOf(workflowId).steps.some((s) => s.turnKey === 'coder-1'),
          20_000,
          'the Coder step',
        );
        await handle.executeUpdate(feedbackUpdate, { args: ['carried over?'] });
        // Feedback for attempt 1 is taken by coder-1's turn only if given before it opens; this
        // one arrives during it and waits for coder-2, which runs in a later execution.
        held.open();
        const result = await readRunResult(handle);
        expect(result).toMatchObject({ state: 'SUCCESS', iterations: 4 });
        expect(result.transitions.filter((t) => t.to === 'PLANNING')).toHaveLength(1);
        expect(result.transitions.filter((t) => t.to === 'CODING')).toHaveLength(4);
        const executions: string[] = [];
        for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
          executions.push(run.runId);
        expect(executions.length).toBeGreaterThan(1);
        const log = logOf(workflowId);
        const coders = log.steps.filter((s) => s.turnKey.startsWith('coder-'));
        expect(coders.map((s) => s.turnKey)).toEqual(['coder-1', 'coder-2', 'coder-3', 'coder-4']);
        expect(coders[1]!.input.open?.context).toMatchObject({
          feedback: ['carried over?'],
          plan: { summary: 'plan' },
        });
        expect(log.steps.filter((s) => s.turnKey === 'planner')).toHaveLength(1);
        expect(log.memory.map((m) => m.kind)).toEqual(['run', 'attempt', 'attempt', 'attempt', 'outcome']);
      });
    } finally {
      await clientConnection.close();
      await connection.close();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
