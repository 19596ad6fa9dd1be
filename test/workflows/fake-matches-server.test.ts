/**
 * The workflow fake (helpers/workflow-fake.ts) stands in for the SDK in every test that runs the
 * workflow code as plain functions. Here the same scripted runs go through it and through a real
 * worker on the dev server, with the same stub activities (helpers/fake-run.ts), and the
 * activities each called are compared in order: the real list read from the run's history. Neither
 * side is a list written here, so a change of the run's steps passes when fake and SDK agree on
 * it, and a fake that drifts from the SDK fails.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { readRunResult } from '../../src/shared/run-failure';
import { workflowBundle } from '../helpers/agent-harness';
import type * as FakeRunModule from '../helpers/fake-run';
import { getTestTemporal } from '../helpers/temporal-env';
import type * as WorkflowFakeModule from '../helpers/workflow-fake';
import type * as CodingAgentModule from '../../src/workflows/coding-agent';

const TASK_QUEUE = `fake-vs-server-${process.pid}`;
/** Far beyond a stub run's second or so: only a run stuck on a step takes this long. */
const STOP_AFTER_MS = 30_000;

/**
 * The workflow code with `@temporalio/workflow` swapped for the fake, in a module registry of its
 * own: the worker of this file keeps the real SDK.
 */
function loadFaked(): {
  fakeRun: typeof FakeRunModule;
  fake: typeof WorkflowFakeModule;
  workflow: typeof CodingAgentModule;
} {
  let loaded!: ReturnType<typeof loadFaked>;
  jest.isolateModules(() => {
    jest.doMock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));
    loaded = {
      fakeRun: jest.requireActual<typeof FakeRunModule>('../helpers/fake-run'),
      fake: jest.requireActual<typeof WorkflowFakeModule>('../helpers/workflow-fake'),
      workflow: jest.requireActual<typeof CodingAgentModule>('../../src/workflows/coding-agent'),
    };
  });
  jest.dontMock('@temporalio/workflow');
  return loaded;
}

const { fakeRun, fake, workflow } = loadFaked();

type Script = FakeRunModule.FakeRunScript;

/** Every host step on this file's worker, on both sides, so the real run has a worker for each. */
const onThisQueue: Script['prepared'] = { queues: { disk: TASK_QUEUE, host: TASK_QUEUE, tests: TASK_QUEUE } };

const writesAFile: Script['step'] = (turnKey, stepIndex) =>
  turnKey === 'coder-1' && stepIndex === 0
    ? { toolCalls: [{ kind: 'file' as const, id: 'c1', name: 'create_file' as const, target: 'a.py' }] }
    : {};

const RUNS: Array<[string, Script, Parameters<typeof FakeRunModule.fakeRunInput>[0]]> = [
  ['passes at the first attempt', { step: writesAFile }, {}],
  [
    'fails once, then passes',
    { step: writesAFile, tests: (attempt) => (attempt === 1 ? fakeRun.failingTests : {}) },
    {},
  ],
  [
    'fails at its iteration limit',
    { step: writesAFile, tests: () => fakeRun.failingTests },
    { maxIterations: 2 },
  ],
];

/** How the lists below mark a local activity: the fake has none, so one in a real run is a difference. */
const LOCAL = '(local)';

/**
 * The activities a run called, in order, from its history: scheduled activities by type, local
 * activities (if the workflow calls any) by the type their marker records, marked as local.
 */
function activitiesOf(history: temporal.api.history.v1.IHistory): string[] {
  const called: string[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) called.push(scheduled.activityType!.name!);
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = marker.details!.data!.payloads![0]!.data!;
      const { activity_type } = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string };
      called.push(`${LOCAL} ${activity_type}`);
    }
  }
  return called;
}

/** The same, from the fake's log of calls. */
function fakeActivities(): string[] {
  return fake.fake.calls.map((call) => call.name);
}

describe('the workflow fake and the dev server call the same activities, in the same order', () => {
  let connection: NativeConnection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  /** Stub activities of the run under way; the worker's activities call through to them. */
  let stubs: Record<string, (...args: unknown[]) => unknown> = {};

  beforeAll(async () => {
    const server = getTestTemporal();
    // Every activity the fake's runs stub, by name; the worker takes each through to this run's stub.
    fakeRun.setUpFakeRun({});
    const names = Object.keys(fake.fake.activities);
    const activities = Object.fromEntries(
      names.map((name) => [name, (...args: unknown[]) => stubs[name]!(...args)]),
    );
    connection = await NativeConnection.connect({ address: server.address });
    client = new Client({
      connection: await Connection.connect({ address: server.address }),
      namespace: server.namespace,
    });
    worker = await Worker.create({
      connection,
      namespace: server.namespace,
      taskQueue: TASK_QUEUE,
      workflowBundle: await workflowBundle(),
      activities,
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await client?.connection.close();
    await connection?.close();
  });

  let counter = 0;

  test.each(RUNS)('a run that %s', async (_what, script, options) => {
    const scripted: Script = { ...script, prepared: onThisQueue };

    fakeRun.setUpFakeRun(scripted);
    const faked = await fakeRun.runOutcome(workflow.codingAgentWorkflow(fakeRun.fakeRunInput(options)));
    const onFake = fakeActivities();

    fakeRun.setUpFakeRun(scripted);
    stubs = fake.fake.activities as typeof stubs;
    const handle = await client.workflow.start('codingAgentWorkflow', {
      workflowId: `fake-vs-server-${process.pid}-${++counter}`,
      taskQueue: TASK_QUEUE,
      args: [fakeRun.fakeRunInput(options)],
    });
    // A real run the fake's does not match may wait on a step forever (an activity the fake
    // stubs under another name is retried): it is stopped, and what it called so far compared.
    const real = await Promise.race([readRunResult(handle), delay(STOP_AFTER_MS).then(() => null)]);
    if (!real) await handle.terminate('stopped by the comparison with the workflow fake');
    const onServer = activitiesOf(await handle.fetchHistory());

    expect(onFake).toEqual(onServer);
    // The lists are of a whole run, and both runs ended alike.
    expect(onServer).toContain('agentStep');
    expect([faked.state, faked.iterations]).toEqual([real?.state, real?.iterations]);
  });
});
