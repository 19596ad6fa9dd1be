import { readRunResult } from '../../src/shared/run-failure';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  Client,
  Connection,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import type { codingAgentWorkflow } from '../../src/workflows';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { loadConfig, type AcaConfig } from '../../src/config';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import { loadBuiltinScenario, scriptedRunInput, type Scenario } from '../../src/llm/scenario';
import { startRunWorkflow } from '../../src/api/aca-client';
import { type RunOptions, type RunResult, type RunSnapshot } from '../../src/shared/run-types';
import type { Language } from '../../src/shared/types';
import { createAcaWorker, WORKFLOWS_PATH } from '../../src/worker';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { getTestTemporal } from './temporal-env';

// Worker INFO lines (state changes, workflow logs) would drown the test output.
try {
  Runtime.install({ logger: new DefaultLogger(process.env.ACA_TEST_LOG_LEVEL === 'INFO' ? 'INFO' : 'WARN') });
} catch {
  // Already installed by another test file in this process.
}

let bundlePromise: Promise<{ code: string }> | null = null;

/**
 * Webpack takes seconds: one bundle serves every worker of a test file and, through a file in the
 * folder the global setup names (ACA_TEST_BUNDLE_DIR), every test file of the run. Test files
 * running side by side may both build it before either has written it; the rename makes the
 * file whole for whoever reads it.
 */
export function workflowBundle(): Promise<{ code: string }> {
  bundlePromise ??= sharedBundle(process.env.ACA_TEST_BUNDLE_DIR);
  return bundlePromise;
}

/**
 * The file of the shared bundle, written if no test file has yet; null without the global
 * setup's folder. Worker processes a test starts load it (ACA_WORKFLOW_BUNDLE) instead of running
 * webpack at every start.
 */
export async function workflowBundleFile(): Promise<string | null> {
  const dir = process.env.ACA_TEST_BUNDLE_DIR;
  if (!dir) return null;
  await workflowBundle();
  const file = path.join(dir, 'workflow-bundle.js');
  return fs.existsSync(file) ? file : null;
}

async function sharedBundle(dir: string | undefined): Promise<{ code: string }> {
  const file = dir ? path.join(dir, 'workflow-bundle.js') : null;
  if (file && fs.existsSync(file)) return { code: fs.readFileSync(file, 'utf8') };
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  if (file) {
    const partial = `${file}.${process.pid}`;
    fs.writeFileSync(partial, code);
    fs.renameSync(partial, file);
  }
  return { code };
}

const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

export interface Harness {
  config: AcaConfig;
  client: Client;
  llm: ScriptedLlmServer;
  taskQueue: string;
  home: string;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  start(
    scenario: string,
    options?: Partial<RunOptions> & { id?: string; language?: Language; task?: string; testsDir?: string },
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof codingAgentWorkflow>>;
  waitFor(
    handle: WorkflowHandle,
    predicate: (s: RunSnapshot) => boolean,
    timeoutMs?: number,
  ): Promise<RunSnapshot>;
  result(handle: WorkflowHandle): Promise<RunResult>;
  /** With ACA_RECORD_HISTORIES=1, saves the run's history under test/histories for the replay suite. */
  recordHistory(handle: WorkflowHandle, name: string, runId?: string): Promise<void>;
  /** The environment that points an `aca` command or worker process at this harness's server, queue and home. */
  cliEnv(): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

/** A scripted model, a worker on its own task queue and a client, all against the shared test server. */
export async function createHarness(
  options: {
    scenarios?: Scenario[];
    env?: NodeJS.ProcessEnv;
    temporal?: { address: string; namespace: string };
  } = {},
): Promise<Harness> {
  const temporal = options.temporal ?? getTestTemporal();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-test-'));
  const config = loadConfig({
    ...process.env,
    ACA_HOME: home,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    ...options.env,
  });
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  const llm = await new ScriptedLlmServer(options.scenarios ? { scenarios: options.scenarios } : {}).start();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  let worker: Worker | null = null;
  let workerRun: Promise<void> | null = null;
  let nativeConnection: NativeConnection | null = null;

  const harness: Harness = {
    config,
    client,
    llm,
    taskQueue,
    home,
    async startWorker() {
      nativeConnection = await NativeConnection.connect({ address: temporal.address });
      worker = await createAcaWorker({
        connection: nativeConnection,
        config,
        taskQueue,
        openaiBaseUrl: llm.url,
        workflowBundle: await workflowBundle(),
      });
      workerRun = worker.run();
    },
    async stopWorker() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun;
      await nativeConnection?.close();
      worker = null;
      workerRun = null;
      nativeConnection = null;
    },
    async start(scenarioName, runOptions = {}) {
      const scenario = (options.scenarios ?? []).find((s) => s.name === scenarioName);
      const chosen = scenario ?? loadBuiltinScenario(scenarioName);
      const { id, language, task, testsDir, ...overrides } = runOptions;
      const workflowId = id ?? `${scenarioName}-${randomBytes(4).toString('hex')}`;
      return startRunWorkflow(
        client,
        {
          workflowId,
          input: scriptedRunInput(chosen, {
            task,
            language,
            testsDir,
            options: overrides,
          }),
        },
        taskQueue,
      );
    },
    async waitFor(handle, predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let last: RunSnapshot | null = null;
      while (Date.now() < deadline) {
        try {
          last = (await handle.query('state')) as RunSnapshot;
          if (predicate(last)) return last;
        } catch {
          // The worker may not have picked the run up yet.
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`condition not reached in ${timeoutMs} ms; last snapshot: ${JSON.stringify(last)}`);
    },
    async result(handle) {
      return (await readRunResult(handle)) as RunResult;
    },
    async recordHistory(handle, name, runId) {
      if (process.env.ACA_RECORD_HISTORIES !== '1') return;
      // The proto JSON form that Worker.runReplayHistories reads, as the Temporal CLI writes it.
      const cli = findTemporalCli();
      if (!cli) throw new Error('recording histories needs the Temporal CLI');
      const shown = spawnSync(
        cli,
        [
          'workflow',
          'show',
          '--workflow-id',
          handle.workflowId,
          ...(runId ? ['--run-id', runId] : []),
          '--output',
          'json',
          '--address',
          temporal.address,
          '--namespace',
          temporal.namespace,
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      if (shown.status !== 0) throw new Error(`temporal workflow show failed: ${shown.stderr}`);
      fs.mkdirSync(HISTORIES_DIR, { recursive: true });
      fs.writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), shown.stdout);
    },
    cliEnv() {
      return {
        TEMPORAL_ADDRESS: config.temporalAddress,
        TEMPORAL_NAMESPACE: config.namespace,
        ACA_TASK_QUEUE: taskQueue,
        ACA_HOME: home,
      };
    },
    async close() {
      await harness.stopWorker();
      await connection.close();
      await llm.stop();
    },
  };
  return harness;
}
