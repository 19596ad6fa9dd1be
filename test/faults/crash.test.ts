import { readRunResult } from '../../src/shared/run-failure';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadScenarios } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import type { RunResult } from '../../src/shared/run-types';
import { startDevServer, startDevServerOnFreePorts } from '../../src/temporal/dev-server';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

function expectNoCompletedCallRepeated(llm: ScriptedLlmServer): void {
  const repeated = [...llm.completedCallsByKey()].filter(([, n]) => n > 1);
  expect(repeated).toEqual([]);
}

describe('a worker killed with SIGKILL', () => {
  let h: Harness;
  let worker: WorkerProcess | null = null;
  // The killed worker's step goes to the new one once its heartbeat timeout passes: a few seconds
  // rather than each step's own 20 to 30.
  const workerEnv = () => ({ ...h.cliEnv(), OPENAI_BASE_URL: h.llm.url, ACA_HEARTBEAT_TIMEOUT: '5' });

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
  });
  afterEach(async () => {
    await worker?.kill();
    worker = null;
  });
  afterAll(async () => {
    await h?.close();
  });

  test('during a model call: a new worker finishes the run and no completed call is made again', async () => {
    worker = await spawnWorker(workerEnv());
    const handle = await h.start('slow-coder');
    await until(
      () => h.llm.requests.some((r) => r.scenario === 'slow-coder' && r.agent === 'coder'),
      60_000,
      'the Coder call',
    );
    await worker.kill('SIGKILL');
    worker = await spawnWorker(workerEnv());

    const result = (await readRunResult(handle)) as RunResult;
    await h.recordHistory(handle, 'crash-model-call');
    expect(result.state).toBe('SUCCESS');
    expectNoCompletedCallRepeated(h.llm);
    const coderFirst = h.llm.requests.filter(
      (r) => r.scenario === 'slow-coder' && r.agent === 'coder' && r.step === 0,
    );
    expect(coderFirst.map((r) => r.status)).toEqual(['dropped', 200]);
    expect(fs.readFileSync(path.join(result.workspace, 'greet.py'), 'utf8')).toContain('Hello, {name}!');
    expect(result.files.sort()).toEqual(['greet.py', 'test_greet.py']);
  });

  test('during a test run: the tests run again on a new worker and the run succeeds', async () => {
    worker = await spawnWorker(workerEnv());
    const handle = await h.start('slow-tests');
    const workspace = path.join(h.home, 'workspaces', handle.workflowId);
    // The scenario's test appends a line to this log when it starts, then sleeps 6 s.
    const startsLog = path.join(workspace, 'test-starts.log');
    const starts = () =>
      fs.existsSync(startsLog) ? fs.readFileSync(startsLog, 'utf8').split('\n').filter(Boolean).length : 0;
    await until(() => starts() === 1, 60_000, 'the test inside the sandbox to start');
    await worker.kill('SIGKILL');
    const before = fs.readFileSync(path.join(workspace, 'test_greet.py'), 'utf8');
    worker = await spawnWorker(workerEnv());

    const result = (await readRunResult(handle)) as RunResult;
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(1);
    expectNoCompletedCallRepeated(h.llm);
    expect(fs.readFileSync(path.join(result.workspace, 'test_greet.py'), 'utf8')).toBe(before);
    // The interrupted test run was begun again: the test started twice, in the second attempt
    // of the one runTests activity.
    expect(starts()).toBe(2);
    const history = await handle.fetchHistory();
    const runTestsScheduled = new Set(
      (history.events ?? [])
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTests')
        .map((e) => String(e.eventId)),
    );
    const attempts = (history.events ?? [])
      .filter((e) =>
        runTestsScheduled.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')),
      )
      .map((e) => e.activityTaskStartedEventAttributes?.attempt);
    expect(attempts).toEqual([2]);
  });
});

describe('the Temporal server killed and restarted from its state file', () => {
  test('a run in flight completes', async () => {
    const cliPath = findTemporalCli();
    if (!cliPath) throw new Error('no Temporal CLI: the global setup should have provided one');
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-restart-'));
    const dbFile = path.join(home, 'temporal.db');
    let server = await startDevServerOnFreePorts({ cliPath, dbFile, headless: true });
    // The restart must come back where the worker and the client look for it.
    const port = Number(server.address.split(':').pop());
    const start = () => startDevServer({ cliPath, dbFile, port, headless: true });
    const llm = await new ScriptedLlmServer({ scenarios: loadScenarios(TEST_SCENARIOS) }).start();
    const env = {
      TEMPORAL_ADDRESS: server.address,
      ACA_TASK_QUEUE: 'restart-test',
      ACA_HOME: home,
      OPENAI_BASE_URL: llm.url,
    };
    let connection = await Connection.connect({ address: server.address });
    await registerSearchAttributes(connection, 'default');
    const worker = await spawnWorker(env);
    try {
      const client = new Client({ connection });
      const harnessInput = loadScenarios(TEST_SCENARIOS).find((s) => s.name === 'slow-coder')!;
      await client.workflow.start('codingAgentWorkflow', {
        workflowId: 'restart-run',
        taskQueue: 'restart-test',
        args: [
          {
            task: harnessInput.task!,
            language: 'python',
            workspace: path.join(home, 'workspaces', 'restart-run'),
            testsDir: null,
            model: 'scripted:slow-coder',
            options: {
              maxIterations: 3,
              warnAt: 2,
              maxTokens: null,
              maxStepsPerTurn: 12,
              modelTimeoutMs: 60_000,
            },
            repo: null,
            gitDir: path.join(home, 'git', 'restart-run.git'),
            testCommand: null,
            setupCommand: null,
            setupNetwork: false,
          },
        ],
      });
      await until(() => llm.requests.some((r) => r.agent === 'coder'), 60_000, 'the Coder call');
      server.kill('SIGKILL');
      await server.exited;
      await connection.close().catch(() => undefined);
      server = await start();
      connection = await Connection.connect({ address: server.address });
      const result = (await readRunResult(
        new Client({ connection }).workflow.getHandle('restart-run'),
      )) as RunResult;
      expect(result.state).toBe('SUCCESS');
      expect(result.transitions.map((t) => t.to)).toEqual(['PLANNING', 'CODING', 'TESTING', 'SUCCESS']);
    } finally {
      await worker.kill();
      await connection.close().catch(() => undefined);
      await server.stop();
      await llm.stop();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
