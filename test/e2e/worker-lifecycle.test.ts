/**
 * `aca worker` and `aca up` as processes: draining on SIGTERM, one worker per embedded database
 * folder, a prebuilt workflow bundle that is not there, its log when the server goes away, the
 * warning without a sandbox, and the local stack from start to Ctrl-C.
 */
import { readRunResult } from '../../src/shared/run-failure';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBuiltinScenario, loadScenarios } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import { LOCK_FILE } from '../../src/memory/data-dir-lock';
import type { RunResult } from '../../src/shared/run-types';
import { getFreePort, isTemporalReachable, startDevServerOnFreePorts } from '../../src/temporal/dev-server';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { createHarness, workflowBundleFile, type Harness } from '../helpers/agent-harness';
import { ACA_BIN, runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

describe('aca worker as a process', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  const workerEnv = (extra: NodeJS.ProcessEnv = {}) => ({
    ...h.cliEnv(),
    OPENAI_BASE_URL: h.llm.url,
    DATABASE_URL: '',
    ...extra,
  });

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.kill();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('SIGTERM drains: the test run in progress finishes, the worker exits 0, nothing is run twice', async () => {
    const worker = await spawnWorker(workerEnv());
    workers.push(worker);
    const handle = await h.start('slow-tests');
    const startsLog = path.join(h.home, 'workspaces', handle.workflowId, 'test-starts.log');
    const starts = () =>
      fs.existsSync(startsLog) ? fs.readFileSync(startsLog, 'utf8').split('\n').filter(Boolean).length : 0;
    await until(() => starts() === 1, 60_000, 'the test inside the sandbox to start');

    const exited = new Promise<number | null>((resolve) =>
      worker.child.once('exit', (code) => resolve(code)),
    );
    worker.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The activity that was running when the signal came completed on its first attempt.
    const history = await handle.fetchHistory();
    const completedRunTests = (history.events ?? []).filter((e) => {
      const scheduledId = e.activityTaskCompletedEventAttributes?.scheduledEventId;
      if (scheduledId === undefined || scheduledId === null) return false;
      const scheduled = history.events!.find((x) => String(x.eventId) === String(scheduledId));
      return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'runTests';
    });
    expect(completedRunTests).toHaveLength(1);

    workers.push(await spawnWorker(workerEnv()));
    const result = (await readRunResult(handle)) as RunResult;
    expect(result.state).toBe('SUCCESS');
    expect(starts()).toBe(1);
  });

  test('a second worker on the same embedded database folder is refused, naming the holder', async () => {
    const first = await spawnWorker(workerEnv());
    workers.push(first);
    const lock = path.join(h.home, 'memory', LOCK_FILE);
    await until(() => fs.existsSync(lock), 30_000, 'the first worker to take the folder');
    const second = await runCli(['worker'], workerEnv(), 60_000);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(
      new RegExp(
        `^aca: database +missing +the embedded database in .*memory cannot be opened: .*in use by process ${first.child.pid}`,
        'm',
      ),
    );
    expect(second.stdout).not.toContain('aca worker polling');
  });

  test('ACA_WORKFLOW_BUNDLE naming no file: the worker refuses to start and names it', async () => {
    const missing = path.join(h.home, 'no-such-bundle.js');
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-no-bundle-'));
    const outcome = await runCli(
      ['worker'],
      workerEnv({ ACA_HOME: home, ACA_WORKFLOW_BUNDLE: missing }),
      60_000,
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`ACA_WORKFLOW_BUNDLE names ${missing}, which does not exist`);
    expect(outcome.stdout).not.toContain('aca worker polling');
  });

  test("a lost server's retries are logged as the worker's own lines, without terminal escapes", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-worker-lost-server-'));
    const server = await startDevServerOnFreePorts({
      cliPath: findTemporalCli()!,
      dbFile: path.join(home, 'temporal.db'),
      headless: true,
    });
    let started: WorkerProcess | undefined;
    try {
      const worker = await spawnWorker(
        workerEnv({ ACA_HOME: path.join(home, 'aca'), TEMPORAL_ADDRESS: server.address }),
      );
      started = worker;
      await server.stop();
      await until(() => /retried \d+ times/.test(worker.output()), 60_000, "the worker's retry warning");
      const retries = worker
        .output()
        .split('\n')
        .filter((line) => /retried \d+ times/.test(line));
      for (const line of retries) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN  /);
      expect(worker.output()).not.toContain('\x1b');
    } finally {
      // The worker writes under the folder (its embedded database) until it is gone: removing the
      // folder under a live worker raced its writes (ENOTEMPTY).
      await started?.kill();
      await server.stop();
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);

  test('a healthy start says what the worker serves, and nothing that looks like an error', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-worker-quiet-'));
    // No prebuilt bundle: the worker bundles its workflow code, as a user's worker does.
    const worker = await spawnWorker(
      workerEnv({ ACA_HOME: home, ACA_WORKFLOW_BUNDLE: '', ACA_TEST_SLOTS: '3' }),
    );
    workers.push(worker);
    const exited = new Promise<number | null>((resolve) =>
      worker.child.once('exit', (code) => resolve(code)),
    );
    worker.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const out = worker.output();
    expect(out).toContain(`aca worker polling task queue "${h.taskQueue}" on ${h.config.temporalAddress}`);
    expect(out).toMatch(
      /^ {2}this host's steps on "aca-host-[0-9a-f]+", its test runs on "aca-tests-[0-9a-f]+" \(3 at a time/m,
    );
    expect(out).toMatch(/^aca worker stopped$/m);
    // The bundler's report, the queues' state changes and the host queues' "No workflows
    // registered" are the SDK's routine; none of them is shown above DEBUG.
    expect(out).not.toMatch(/asset workflow-bundle|Workflow bundle created|Worker state changed|Nexus/);
    expect(out).not.toMatch(/WARN|ERROR|No workflows registered|Warning/);
    fs.rmSync(home, { recursive: true, force: true });
  }, 120_000);

  test('ACA_SANDBOX=none: the worker says at start what that gives up', async () => {
    const worker = await spawnWorker(
      workerEnv({ ACA_SANDBOX: 'none', ACA_HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bare-')) }),
    );
    workers.push(worker);
    expect(worker.output()).toMatch(
      /^aca: warning: sandbox +warn +ACA_SANDBOX=none: tests run without a sandbox; model-written code can read and write what the worker can/m,
    );
  });
});

describe('aca up', () => {
  test('brings up a dev server and a worker that runs a task; Ctrl-C stops both, exit 0', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-up-'));
    const port = await getFreePort();
    const uiPort = await getFreePort();
    const llm = await new ScriptedLlmServer().start();
    // The run's prebuilt workflow bundle: that a worker bundles its own code is the healthy-start case's.
    const bundle = await workflowBundleFile();
    const env = {
      ...process.env,
      ...(bundle ? { ACA_WORKFLOW_BUNDLE: bundle } : {}),
      ACA_HOME: home,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      ACA_UI_URL: `http://127.0.0.1:${uiPort}`,
      ACA_TASK_QUEUE: 'aca-up-test',
      OPENAI_BASE_URL: llm.url,
      DATABASE_URL: '',
    };
    const up = spawn(process.execPath, [ACA_BIN, 'up'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    up.stdout.on('data', (d: Buffer) => (output += d.toString()));
    up.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => up.once('exit', (code) => resolve(code)));
    try {
      await until(() => output.includes('aca is up'), 120_000, '`aca is up`');
      expect(fs.existsSync(path.join(home, 'temporal', 'dev-server.db'))).toBe(true);

      const task = loadBuiltinScenario('demo-fizzbuzz').task!;
      const run = await runCli(['run', task, '--model', 'scripted:demo-fizzbuzz', '--json'], env, 120_000);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ state: 'SUCCESS' });

      up.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(await isTemporalReachable(`127.0.0.1:${port}`, 1000)).toBe(false);
    } finally {
      if (up.exitCode === null) up.kill('SIGKILL');
      await llm.stop();
    }
    // Its own waits allow two minutes each (the server and worker coming up, then the run): on a
    // loaded 2-core machine the two together have taken longer than Jest's two-minute default.
  }, 300_000);
});
