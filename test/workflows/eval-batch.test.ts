/**
 * The batch workflow alone, with stub activities and a stub child run on a real Temporal server:
 * the concurrency bound, continue-as-new and what it carries, the budget, pause and resume passed
 * to the runs, cancellation. ACA_RECORD_HISTORIES=1 saves histories for the replay suite.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { EvaluateRequest, EvalRunInputRequest } from '../../src/activities/eval-activities';
import {
  buildEvalReport,
  type EvalBatchInput,
  type EvalBatchRef,
  type EvalProgress,
  type EvalReport,
  type InstanceOutcome,
} from '../../src/shared/eval-types';
import { DEFAULT_RUN_OPTIONS, type RunInput } from '../../src/shared/run-types';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { evalProgressQuery } from '../../src/workflows/eval-batch';
import { pauseSignal, resumeSignal } from '../../src/workflows/signals';
import { HISTORIES_DIR } from '../helpers/agent-harness';
import { getTestTemporal } from '../helpers/temporal-env';
import { until } from '../helpers/until';
import { evalBatchWorkflow, pausedQuery, releaseSignal } from './eval-stub-workflows';

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
const TASK_QUEUE = `eval-stubs-${process.pid}`;
/** Two hosts' tests queues: one with a slot for every evaluation, one with a single slot. */
const WIDE_TESTS = `${TASK_QUEUE}-tests-wide`;
const ONE_SLOT_TESTS = `${TASK_QUEUE}-tests-one`;
let testsQueue = WIDE_TESTS;
const evaluatedOn = new Set<string>();

let inFlight = 0;
let maxInFlight = 0;
const evaluated: string[] = [];
/** Each instance's outcome as the batch's results keep it (batch-store.ts on disk in aca). */
const results = new Map<string, InstanceOutcome>();
/** Each batch's instances, as its store keeps them: the workflow pages them, never gets them whole. */
const batchIds = new Map<string, string[]>();
const pagesAsked: { batchId: string; from: number; count: number }[] = [];
const reportsBuilt: string[] = [];
const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stubActivities = {
  async evalInstanceIds(request: { batch: EvalBatchRef; from: number; count: number }): Promise<string[]> {
    pagesAsked.push({ batchId: request.batch.batchId, from: request.from, count: request.count });
    return (batchIds.get(request.batch.batchId) ?? []).slice(request.from, request.from + request.count);
  },
  async evalRunInput(request: EvalRunInputRequest): Promise<RunInput> {
    return {
      task: request.instanceId,
      language: 'python',
      workspace: '/nonexistent',
      testsDir: null,
      model: 'stub',
      options: { ...DEFAULT_RUN_OPTIONS, maxCostUsd: request.maxCostUsd },
      repo: null,
      testCommand: null,
      setupCommand: null,
      setupNetwork: false,
      link: null,
      failureMemory: false,
    };
  },
  async evalTestsQueue(): Promise<string> {
    return testsQueue;
  },
  async evaluateEvalInstance(request: EvaluateRequest) {
    evaluatedOn.add(Context.current().info.taskQueue);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await sleepMs(150);
    inFlight -= 1;
    evaluated.push(request.instanceId);
    const judged = request.run?.error
      ? { id: request.instanceId, status: 'error' as const, reason: request.run.error }
      : {
          id: request.instanceId,
          status: request.instanceId.includes('bad') ? ('unresolved' as const) : ('resolved' as const),
          reason: null,
        };
    results.set(`${request.batch.batchId}/${request.instanceId}`, {
      ...judged,
      costUsd: request.run?.costUsd ?? 0,
      tokens: request.run?.tokens ?? { prompt: 0, completion: 0 },
    });
    return judged;
  },
  async writeEvalOutputs(request: { batch: EvalBatchRef }): Promise<EvalReport> {
    reportsBuilt.push(request.batch.batchId);
    const ids = batchIds.get(request.batch.batchId) ?? [];
    const outcomes = ids.flatMap((id) => results.get(`${request.batch.batchId}/${id}`) ?? []);
    return buildEvalReport(ids, outcomes);
  },
  async recordEvalError(): Promise<void> {},
};

function batchInput(batchId: string, ids: string[], more: Partial<EvalBatchInput> = {}): EvalBatchInput {
  batchIds.set(batchId, ids);
  return {
    batchId,
    outDir: `/nonexistent/${batchId}`,
    store: 'folder',
    submitted: ids.length,
    total: ids.length,
    source: 'gold',
    modelName: 'gold',
    concurrency: 2,
    maxCostUsd: null,
    run: { model: 'stub', options: DEFAULT_RUN_OPTIONS },
    ...more,
  };
}

function recordHistory(handle: WorkflowHandle, name: string, runId: string): void {
  if (process.env.ACA_RECORD_HISTORIES !== '1') return;
  const temporal = getTestTemporal();
  const shown = spawnSync(
    findTemporalCli()!,
    [
      'workflow',
      'show',
      '--workflow-id',
      handle.workflowId,
      '--run-id',
      runId,
      '--output',
      'json',
      '--address',
      temporal.address,
      '--namespace',
      temporal.namespace,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (shown.status !== 0) throw new Error(shown.stderr);
  fs.writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), shown.stdout);
}

describe('the eval batch workflow with stub activities', () => {
  let connection: NativeConnection;
  let client: Client;
  let worker: Worker;
  let testWorkers: Worker[] = [];
  let running: Promise<unknown>;
  let counter = 0;
  const id = (name: string) => `${name}-${process.pid}-${(counter += 1)}`;

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
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: require.resolve('./eval-stub-workflows'),
        logger: quietLogger,
      }),
      activities: stubActivities,
    });
    testWorkers = await Promise.all(
      [
        [WIDE_TESTS, 100],
        [ONE_SLOT_TESTS, 1],
      ].map(([taskQueue, slots]) =>
        Worker.create({
          connection,
          namespace: temporal.namespace,
          taskQueue: taskQueue as string,
          activities: stubActivities,
          maxConcurrentActivityTaskExecutions: slots as number,
        }),
      ),
    );
    running = Promise.all([worker.run(), ...testWorkers.map((w) => w.run())]);
  });
  afterAll(async () => {
    for (const w of testWorkers) w.shutdown();
    worker?.shutdown();
    await running;
    await client?.connection.close();
    await connection?.close();
  });
  beforeEach(() => {
    inFlight = 0;
    maxInFlight = 0;
    evaluated.length = 0;
    testsQueue = WIDE_TESTS;
    evaluatedOn.clear();
  });

  test("evaluations run on a host's tests queue, as many at once as its test slots", async () => {
    testsQueue = ONE_SLOT_TESTS;
    const ids = ['s1', 's2', 's3', 's4'];
    const batchId = id('batch-slots');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ids, { concurrency: 4 })],
    });
    const report: EvalReport = await handle.result();
    expect(report.resolved_ids).toEqual(ids);
    expect([...evaluatedOn]).toEqual([ONE_SLOT_TESTS]);
    expect(maxInFlight).toBe(1);
  });

  test('at most --concurrency in flight; continue-as-new every few instances; each instance evaluated once', async () => {
    const ids = ['i1', 'i2', 'bad3', 'i4', 'i5', 'i6', 'i7'];
    const batchId = id('batch-can');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ids, { concurrency: 3, instancesPerExecution: 3 })],
    });
    const report: EvalReport = await handle.result();
    expect(maxInFlight).toBe(3);
    expect([...evaluated].sort()).toEqual([...ids].sort());
    expect(report).toMatchObject({
      total_instances: 7,
      submitted_instances: 7,
      resolved_instances: 6,
      unresolved_ids: ['bad3'],
    });
    expect(report.submitted_ids).toEqual(ids);
    // Each execution asks its store for the instances it starts, from where the last one stopped.
    expect(pagesAsked.filter((p) => p.batchId === batchId).map((p) => p.from)).toEqual([0, 3, 6]);
    const latest = await client.workflow.getHandle(batchId).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    recordHistory(handle, 'eval-batch-continued', handle.firstExecutionRunId);
  });

  test('a batch in the database builds its report once, at its end, however many executions it takes', async () => {
    const ids = ['d1', 'd2', 'bad3', 'd4', 'd5'];
    const batchId = id('batch-db');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ids, { store: 'database', concurrency: 2, instancesPerExecution: 2 })],
    });
    const report: EvalReport = await handle.result();
    expect(report).toMatchObject({ submitted_instances: 5, resolved_instances: 4, unresolved_ids: ['bad3'] });
    expect(pagesAsked.filter((p) => p.batchId === batchId).map((p) => p.from)).toEqual([0, 2, 4]);
    expect(reportsBuilt.filter((b) => b === batchId)).toHaveLength(1);
  });

  test('what one execution hands the next stays the same size however many instances came before', async () => {
    // Ten executions of six instances: the tenth starts with what the second did but for its
    // counts' extra digits (carrying even the 48 ids ended since would add over 200 bytes), and
    // each full execution takes about as many events as the first.
    const ids = Array.from({ length: 60 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const batchId = id('batch-bounded');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ids, { store: 'database', concurrency: 4, instancesPerExecution: 6 })],
    });
    const report: EvalReport = await handle.result();
    expect(report.resolved_instances).toBe(60);

    const executions: { startedBytes: number; events: number }[] = [];
    let runId: string | null | undefined = handle.firstExecutionRunId;
    while (runId) {
      const history = await client.workflow.getHandle(batchId, runId).fetchHistory();
      const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
      const payloads = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      executions.push({
        startedBytes: payloads.reduce((sum, p) => sum + (p.data?.length ?? 0), 0),
        events: events.length,
      });
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    }
    expect(executions).toHaveLength(10);
    const [first, second] = executions;
    const tenth = executions[9]!;
    expect(tenth.startedBytes - second!.startedBytes).toBeLessThanOrEqual(16);
    // The full executions (all but the last, which also reads the report) take the same steps.
    for (const e of executions.slice(0, 9)) expect(e.events).toBeLessThanOrEqual(first!.events * 1.5);
  });

  test('the budget: no instance starts once the runs ended cost it; those left are not submitted', async () => {
    const batchId = id('batch-budget');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ['a', 'b', 'c', 'd'], { source: 'agent', concurrency: 1, maxCostUsd: 2 })],
    });
    const report: EvalReport = await handle.result();
    expect(report.submitted_ids).toEqual(['a', 'b']);
    expect(report.total_instances).toBe(4);
    expect(report.cost_usd).toBe(2);
    expect(report.tokens).toEqual({ prompt: 20, completion: 10 });
  });

  test('pause and resume reach the runs in flight; a cancelled batch cancels them and reports the rest not submitted', async () => {
    const batchId = id('batch-pause');
    const handle = await client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: TASK_QUEUE,
      args: [batchInput(batchId, ['hold-1', 'hold-2', 'hold-3'], { source: 'agent', concurrency: 2 })],
    });
    const child = (n: number) => client.workflow.getHandle(`${batchId}/hold-${n}`);
    const childPaused = async (n: number) =>
      child(n)
        .query(pausedQuery)
        .catch(() => null);
    await until(
      async () => (await childPaused(1)) === false && (await childPaused(2)) === false,
      30_000,
      'two runs',
    );
    await handle.signal(pauseSignal);
    await until(
      async () => (await childPaused(1)) === true && (await childPaused(2)) === true,
      30_000,
      'runs paused',
    );
    expect((await handle.query(evalProgressQuery)) as EvalProgress).toMatchObject({
      paused: true,
      running: 2,
      done: 0,
    });
    // A run that ends while the batch is paused: nothing new starts.
    await child(1).signal(releaseSignal);
    await until(
      async () => ((await handle.query(evalProgressQuery)) as EvalProgress).done === 1,
      30_000,
      'one done',
    );
    await sleepMs(500);
    expect(((await handle.query(evalProgressQuery)) as EvalProgress).running).toBe(1);
    await handle.signal(resumeSignal);
    await until(async () => (await childPaused(2)) === false, 30_000, 'run resumed');
    await until(async () => (await childPaused(3)) === false, 30_000, 'third run started');
    await handle.cancel();
    const report: EvalReport = await handle.result();
    expect(report).toMatchObject({
      total_instances: 3,
      submitted_instances: 3,
      resolved_ids: ['hold-1'],
      error_ids: ['hold-2', 'hold-3'],
    });
    // A cancelled run ends FAILED, its workflow failed with its result as details: the batch still
    // counts what each cancelled run cost.
    expect((await child(2).describe()).status.name).toBe('FAILED');
    expect(report.cost_usd).toBe(3);
    recordHistory(handle, 'eval-batch-paused-cancelled', handle.firstExecutionRunId);
  });
});
