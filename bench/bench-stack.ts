/**
 * What the Temporal-backed benchmark parts run on: a Temporal server of their own
 * (a headless dev server on free ports, or the one at TEMPORAL_ADDRESS when that
 * is set and answers), the scripted model, one in-process worker with room for
 * many concurrent activities, and a client. Runs keep their files in a temporary
 * ACA_HOME so a benchmark never touches ~/.aca.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { reportRef, type ReportStore } from '../src/store/report-store';
import { startRunWorkflow } from '../src/api/aca-client';
import { loadConfig, type AcaConfig } from '../src/config';
import { ScriptedLlmServer } from '../src/llm/scripted-server';
import type { ModelOptionsTable } from '../src/llm/model-options';
import type { Scenario } from '../src/llm/scenario';
import {
  DEFAULT_RUN_OPTIONS,
  type RepoInput,
  type RunOptions,
  type RunResult,
} from '../src/shared/run-types';
import { safeKey } from '../src/shared/safe-key';
import type { Language, TestRunReport } from '../src/shared/types';
import {
  isTemporalReachable,
  startDevServerOnFreePorts,
  type DevServerHandle,
} from '../src/temporal/dev-server';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { ensureTemporalCli } from '../src/temporal/temporal-cli';
import { createAcaWorker, createRunStores, WORKFLOWS_PATH } from '../src/worker';

export interface BenchStackOptions {
  progress: (message: string) => void;
  /** Point the worker at OPENAI_BASE_URL (a real model) instead of the scripted server. */
  live?: boolean;
  maxConcurrentActivities?: number;
  /** Keep the temporary ACA_HOME (workspaces, conversations, test reports) for inspection. */
  keepHome?: boolean;
  /** Workflow code to bundle instead of src/workflows (for trying out a change to the workflow). */
  workflowsPath?: string;
  /** SQLite file of the dev server this stack starts (default: in the temporary folder, on disk). */
  temporalDbFile?: string;
  /** Per-model options over ACA_MODEL_OPTIONS's, for the scripted models of a part. */
  modelOptions?: ModelOptionsTable;
  /**
   * ACA_GIT_STORE for the worker (a path or git URL it pushes every run's branch to). Absent: the
   * default store under the temporary ACA_HOME (nothing pushed, as on one host), never the
   * ACA_GIT_STORE of the environment.
   */
  gitStore?: string;
  /** A Temporal server that answers (another stack's): used instead of starting one. */
  temporalAddress?: string;
}

export interface StartedRun {
  workflowId: string;
  firstExecutionRunId: string;
  handle: WorkflowHandle;
  /** Milliseconds (performance.now) just before the start request was sent. */
  startedAt: number;
}

export interface RunSpec {
  workflowId: string;
  task: string;
  model: string;
  language?: Language;
  testsDir?: string | null;
  options?: Partial<RunOptions>;
  /** A `--repo` run: the repository and its base commit (resolveRepository's). */
  repo?: RepoInput | null;
  /** `--test-cmd`. */
  testCommand?: string | null;
}

export interface BenchStack {
  config: AcaConfig;
  client: Client;
  llm: ScriptedLlmServer;
  taskQueue: string;
  home: string;
  temporalAddress: string;
  /** Whether this stack started the Temporal server (false: reused TEMPORAL_ADDRESS). */
  ownServer: boolean;
  /** The SQLite file of the dev server this stack started. */
  temporalDbFile: string | null;
  /** The process id of the dev server this stack started, for its CPU time. */
  serverPid: number | null;
  /** Where the worker keeps full test reports (Postgres with DATABASE_URL, else files in `home`). */
  reports: ReportStore;
  /** Registers `scenario` under a fresh name (so requests can be told apart per run) and returns the model to ask for. */
  scriptedModel(scenario: Scenario, alias: string): string;
  start(spec: RunSpec): Promise<StartedRun>;
  /** The full test reports the runTests activity saved for a run, by attempt. */
  testReports(
    run: Pick<StartedRun, 'workflowId' | 'firstExecutionRunId'>,
    attempts: number,
  ): Promise<Map<number, TestRunReport>>;
  warmedUp: boolean;
  close(): Promise<void>;
}

function installQuietRuntime(): void {
  const level = loadConfig().logLevel ?? 'WARN';
  try {
    // Workflow INFO logs (every state change of every run) would bury the progress lines, and
    // core's own warnings go to stderr through the same logger instead of onto the tables.
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // Already installed in this process (tests, or a second stack).
  }
}

const noop = (): void => undefined;
export const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

const bundles = new Map<string, ReturnType<typeof bundleWorkflowCode>>();

export async function openBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const { progress } = options;
  installQuietRuntime();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-'));
  const home = path.join(tmp, 'home');
  const cleanup: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const fn of cleanup.reverse())
      await fn().catch((err: unknown) => progress(`cleanup: ${String(err)}`));
    if (options.keepHome) progress(`kept the benchmark's files in ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  };
  try {
    let server: DevServerHandle | null = null;
    let address = process.env.TEMPORAL_ADDRESS;
    const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
    if (options.temporalAddress) {
      address = options.temporalAddress;
      progress(`using the Temporal server at ${address}`);
    } else if (address && (await isTemporalReachable(address, 3000))) {
      progress(`using the Temporal server at ${address} (TEMPORAL_ADDRESS)`);
    } else {
      if (address) progress(`TEMPORAL_ADDRESS=${address} does not answer; starting a dev server of our own`);
      const cliPath = await ensureTemporalCli({ onProgress: (m) => progress(`temporal cli: ${m}`) });
      server = await startDevServerOnFreePorts({
        cliPath,
        dbFile: options.temporalDbFile ?? path.join(tmp, 'temporal.db'),
        headless: true,
        namespace,
        logFile: path.join(tmp, 'temporal.log'),
        // For experiments, e.g. "--dynamic-config-value system.enableActivityEagerExecution=true".
        extraArgs: (process.env.ACA_BENCH_TEMPORAL_ARGS ?? '').split(/\s+/).filter(Boolean),
      });
      const started = server;
      cleanup.push(async () => {
        await started.stop();
        if (options.temporalDbFile)
          for (const suffix of ['', '-wal', '-shm'])
            fs.rmSync(`${options.temporalDbFile}${suffix}`, { force: true });
      });
      address = server.address;
      progress(`Temporal dev server on ${address} ready in ${(server.startupMs / 1000).toFixed(1)} s`);
    }
    const connection = await Connection.connect({ address });
    cleanup.push(() => connection.close());
    await registerSearchAttributes(connection, namespace);

    const loaded = loadConfig({
      ...process.env,
      ACA_HOME: home,
      ACA_GIT_STORE: options.gitStore ?? '',
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
    });
    const config: AcaConfig = {
      ...loaded,
      modelOptions: { ...loaded.modelOptions, ...options.modelOptions },
    };
    const client = new Client({ connection, namespace });
    const llm = await new ScriptedLlmServer().start();
    cleanup.push(() => llm.stop());

    const workflowsPath = options.workflowsPath ?? WORKFLOWS_PATH;
    // A bundle of src/workflows built beforehand (ACA_WORKFLOW_BUNDLE) serves here as it serves
    // any worker; other workflow code is always bundled.
    const prebuilt = options.workflowsPath ? null : config.workflowBundleFile;
    let bundle = bundles.get(workflowsPath);
    if (!bundle && !prebuilt) {
      progress(`bundling the workflow code (${workflowsPath})`);
      bundle = bundleWorkflowCode({ workflowsPath, logger: quietLogger });
      bundles.set(workflowsPath, bundle);
    }
    const workflowBundle = prebuilt ? { codePath: prebuilt } : await bundle!;
    const taskQueue = `bench-${randomBytes(4).toString('hex')}`;
    const nativeConnection = await NativeConnection.connect({ address });
    cleanup.push(() => nativeConnection.close());
    const worker: Worker = await createAcaWorker({
      connection: nativeConnection,
      config,
      taskQueue,
      ...(options.live ? {} : { openaiBaseUrl: llm.url }),
      workflowBundle,
      maxConcurrentActivities: options.maxConcurrentActivities ?? 1000,
    });
    const workerRun = worker.run();
    cleanup.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun;
    });
    progress(
      `worker on task queue ${taskQueue}; model: ${options.live ? (config.openaiBaseUrl ?? 'OpenAI default endpoint') : `scripted at ${llm.url}`}`,
    );

    // The worker's own kind of store, so that the reports it saved are found wherever they are.
    const runStores = createRunStores(config);
    cleanup.push(() => runStores.close());
    const stack: BenchStack = {
      config,
      client,
      llm,
      taskQueue,
      home,
      temporalAddress: address,
      ownServer: server !== null,
      temporalDbFile: server?.dbFile ?? null,
      serverPid: server?.pid ?? null,
      reports: runStores.reports,
      warmedUp: false,
      scriptedModel(scenario, alias) {
        llm.addScenario({ ...scenario, name: alias });
        return `scripted:${alias}`;
      },
      async start(spec) {
        const startedAt = performance.now();
        const handle = await startRunWorkflow(
          client,
          {
            workflowId: spec.workflowId,
            input: {
              task: spec.task,
              language: spec.language ?? 'python',
              workspace: path.join(config.workspacesRoot, safeKey(spec.workflowId)),
              testsDir: spec.testsDir ?? null,
              model: spec.model,
              options: { ...DEFAULT_RUN_OPTIONS, ...spec.options },
              repo: spec.repo ?? null,
              testCommand: spec.testCommand ?? null,
              setupCommand: null,
              setupNetwork: false,
              link: null,
            },
          },
          taskQueue,
        );
        return {
          workflowId: spec.workflowId,
          firstExecutionRunId: handle.firstExecutionRunId,
          handle,
          startedAt,
        };
      },
      async testReports(run, attempts) {
        const runKey = `${safeKey(run.workflowId)}/${safeKey(run.firstExecutionRunId)}`;
        const reports = new Map<number, TestRunReport>();
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const report = await runStores.reports.loadReport(reportRef(runKey, attempt));
          if (report) reports.set(attempt, report);
        }
        return reports;
      },
      close: closeAll,
    };
    return stack;
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Waits for a run's result. */
export async function runResult(run: StartedRun): Promise<RunResult> {
  return (await run.handle.result()) as RunResult;
}

/** A short random suffix for workflow ids and scenario aliases. */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
