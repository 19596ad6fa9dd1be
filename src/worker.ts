import * as fs from 'node:fs';
import { evalDatabase } from './eval/batch-repository';
import * as path from 'node:path';
import { log as activityLog } from '@temporalio/activity';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import { createActivities, type Activities } from './activities';
import { lazyMemory } from './activities/memory-activities';
import { FileConversationStore } from './store/conversation-store';
import { FileReportStore } from './store/report-store';
import { loadConfig, type AcaConfig } from './config';
import { UserInputError } from './shared/errors';
import { createOpenAIChatModel } from './llm/chat-model';
import { loadPriceTable } from './llm/model-prices';
import { logLineWriter } from './temporal/log-lines';
import { registerSearchAttributes } from './temporal/search-attributes';
import { DEFAULT_SANDBOX_LIMITS, startSpawnHelper } from './sandbox';
import { openPostgresRunStores, type RunStores } from './store/run-store-repository';
import { HostRuns, type GitStoreLocation } from './repo';
import { McpPool, mcpQueueFor, readMcpConfigFile, type McpServerStatus } from './mcp';
import { createMcpActivities, mcpToolsForTurns } from './activities/mcp-activities';

export const WORKFLOWS_PATH = require.resolve('./workflows');

export interface AcaWorkerOptions {
  connection: NativeConnection;
  config: AcaConfig;
  taskQueue?: string;
  /** Overrides OPENAI_BASE_URL, e.g. to point the demo at the scripted server. */
  openaiBaseUrl?: string;
  /** A prebuilt bundle saves the seconds webpack needs at every start. */
  workflowBundle?: WorkflowBundleOption;
  maxConcurrentActivities?: number;
  /** Told, once the MCP servers of ACA_MCP_CONFIG have started or failed, how each one is. */
  onMcpStatus?: (status: McpServerStatus[]) => void;
}

/** The workflow code a worker runs: a bundle given or named (ACA_WORKFLOW_BUNDLE), else bundled now. */
function workflowCode(
  given: WorkflowBundleOption | undefined,
  file: string | null,
): { workflowBundle: WorkflowBundleOption } | { workflowsPath: string } {
  if (given) return { workflowBundle: given };
  if (file) {
    if (!fs.existsSync(file))
      throw new UserInputError(`ACA_WORKFLOW_BUNDLE names ${file}, which does not exist`);
    return { workflowBundle: { codePath: file } };
  }
  return { workflowsPath: WORKFLOWS_PATH };
}

/**
 * Where runs keep their conversations and full test reports (only their references enter
 * workflow history). With DATABASE_URL, in that Postgres database, beside failure memory, so
 * that every worker on every host sees them; without it, in files under `$ACA_HOME/runs`, which
 * only workers sharing that folder see. Call `close` when done with them.
 */
export function createRunStores(config: Pick<AcaConfig, 'home' | 'databaseUrl'>): RunStores {
  if (config.databaseUrl) return openPostgresRunStores(config.databaseUrl);
  const root = path.join(config.home, 'runs');
  return {
    conversations: new FileConversationStore(root),
    reports: new FileReportStore(root),
    description: `files in ${root}`,
    close: async () => undefined,
  };
}

/**
 * The store this worker pushes runs' branches to. The default store lies under ACA_HOME, so the
 * only workers that reach it share this disk, and with it the runs' own git directories: pushing
 * there would cost every run time (a `--repo` run's first push copies the repository's history)
 * and give no worker anything it lacks.
 */
export function pushedGitStore(config: AcaConfig): GitStoreLocation | null {
  return config.gitStore.isDefault ? null : config.gitStore;
}

/**
 * aca's activities with the worker's dependencies built from the configuration: the model client,
 * the conversation and report stores (see createRunStores), failure memory (opened on first use)
 * and the sandbox. `close` releases failure memory and the stores' connections; call it when the
 * worker that runs them stops.
 */
export function createAcaActivities(
  config: AcaConfig,
  options: { openaiBaseUrl?: string } = {},
): { activities: Activities; mcp: WorkerMcp | null; close(): Promise<void> } {
  // Before anything large is loaded: test runs start from this small helper process, whose
  // forks stay cheap however big the worker grows (see src/process/spawn-helper.ts).
  startSpawnHelper();
  const runStores = createRunStores(config);
  // Read first: a worker whose MCP file is wrong does not start, saying which key is.
  const mcp = config.mcpConfigFile ? startMcp(config.mcpConfigFile, runStores.conversations) : null;
  // Eval batches in the database, when there is one, so that hosts sharing no folder serve them.
  const evalDb = config.databaseUrl ? evalDatabase(config.databaseUrl) : undefined;
  // Opened on first use, so a worker starts even while the database is down. PGlite lives under
  // ACA_HOME unless DATABASE_URL names a server.
  const memory = lazyMemory(async () => {
    const { openFailureMemory, embeddedDataDir } = await import('./memory');
    return openFailureMemory(
      config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: embeddedDataDir(config.home) },
    );
  });
  // Open it now, in the background: the embedded database takes seconds to start, which the
  // first run would otherwise wait for. A failure here is retried by the first memory activity.
  memory.get().catch(() => undefined);
  const activities = createActivities({
    memory: memory.get,
    logPrompts: config.logPrompts,
    runCommand: config.runCommand,
    ...(mcp ? { mcpTools: mcpToolsForTurns(mcp.pool) } : {}),
    store: runStores.conversations,
    reports: runStores.reports,
    sandboxMode: config.sandbox,
    limitMaximums: config.limitMaximums,
    gitAuthor: config.gitAuthor,
    gitStore: pushedGitStore(config),
    host: hostRunsOf(config),
    hostStartTimeoutMs: config.hostStartTimeoutMs,
    ...(config.heartbeatTimeoutMs ? { heartbeatTimeoutMs: config.heartbeatTimeoutMs } : {}),
    prices: loadPriceTable(config.pricesFile),
    // The key is read here, on the worker, and never passed through the workflow.
    chatModel: createOpenAIChatModel({
      baseURL: options.openaiBaseUrl ?? config.openaiBaseUrl,
      apiKey: config.openaiApiKey,
      modelOptions: config.modelOptions,
      warn: warnFromActivity,
    }),
    modelOptions: config.modelOptions,
    ...(evalDb ? { evalDatabase: evalDb } : {}),
    evalHome: config.home,
  });
  return {
    activities,
    mcp,
    close: async () => {
      const closed = await Promise.allSettled([
        memory.close(),
        runStores.close(),
        evalDb?.close(),
        mcp?.pool.close(),
      ]);
      for (const result of closed) if (result.status === 'rejected') throw result.reason;
    },
  };
}

/**
 * The MCP servers of a worker (ACA_MCP_CONFIG), started in the background, and the activity of
 * their calls. `pool.toolsFor(role)` lists the tools an agent of that role is offered.
 */
export interface WorkerMcp {
  pool: McpPool;
  /** Resolves once every server is up or has failed (see pool.status()). */
  started: Promise<void>;
  activities: ReturnType<typeof createMcpActivities>;
}

function startMcp(file: string, store: RunStores['conversations']): WorkerMcp {
  const pool = new McpPool(readMcpConfigFile(file), { log: warnFromActivity });
  return { pool, started: pool.start(), activities: createMcpActivities({ store, pool }) };
}

/**
 * One worker per MCP server, polling that server's queue (mcpQueueFor): a call lands only on a
 * worker that keeps its server. Polled even while the server is down here, since it is started
 * again; a call meanwhile fails its attempt and is retried.
 */
async function createMcpWorkers(options: {
  connection: NativeConnection;
  config: AcaConfig;
  taskQueue: string;
  mcp: WorkerMcp;
  maxConcurrentActivities?: number;
}): Promise<Worker[]> {
  return Promise.all(
    options.mcp.pool.servers().map((server) =>
      Worker.create({
        connection: options.connection,
        namespace: options.config.namespace,
        activities: options.mcp.activities,
        taskQueue: mcpQueueFor(options.taskQueue, server),
        shutdownGraceTime: SHUTDOWN_GRACE_MS,
        maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 100,
      }),
    ),
  );
}

/** What `aca worker` says of its MCP servers at start: each one's queue, tools, or why it is down. */
export function mcpStatusLines(taskQueue: string, status: McpServerStatus[]): string[] {
  return status.map((s) =>
    s.ok
      ? `  MCP server "${s.server}" on "${mcpQueueFor(taskQueue, s.server)}": ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'} (${s.tools.join(', ')})`
      : `  MCP server "${s.server}" is down, started again in the background: ${s.error ?? 'not started'}`,
  );
}

/** The runs whose files are on this worker's host (its ACA_HOME). */
export function hostRunsOf(config: AcaConfig): HostRuns {
  return new HostRuns({
    store: pushedGitStore(config),
    home: config.home,
    workspacesRoot: config.workspacesRoot,
    author: config.gitAuthor,
  });
}

/** Model calls run inside activities, whose logger carries the run's ids; outside one, stderr. */
function warnFromActivity(message: string): void {
  try {
    activityLog.warn(message);
  } catch {
    process.stderr.write(`aca: warning: ${message}\n`);
  }
}

/** Running activities a stopping worker waits for: the longest is a test run at its wall-clock limit. */
const SHUTDOWN_GRACE_MS = DEFAULT_SANDBOX_LIMITS.wallTimeoutMs + 30_000;

/**
 * The workers of this host's two task queues (see HostRuns): the steps that read or write the
 * files of runs on this host, and their test runs, as many at once as the host has test slots.
 * A worker of your own that runs aca's workflow runs these beside it, with the same activities.
 */
export async function createHostWorkers(options: {
  connection: NativeConnection;
  config: AcaConfig;
  activities: Activities;
  maxConcurrentActivities?: number;
}): Promise<Worker[]> {
  const { config } = options;
  const queues = hostRunsOf(config).queues();
  const common = {
    connection: options.connection,
    namespace: config.namespace,
    activities: options.activities,
    // On SIGTERM a worker stops polling and lets what it runs finish; without a grace time the
    // SDK cancels at once and the interrupted test run is redone.
    shutdownGraceTime: SHUTDOWN_GRACE_MS,
  };
  return [
    await Worker.create({
      ...common,
      taskQueue: queues.host,
      maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 100,
    }),
    await Worker.create({
      ...common,
      taskQueue: queues.tests,
      maxConcurrentActivityTaskExecutions: config.testSlots,
    }),
  ];
}

/**
 * The worker of one process: it polls the shared task queue (workflows, model steps, memory,
 * preparation and adoption) and its host's two queues (see HostRuns): the steps that read or
 * write the files of runs on this host, and their test runs, as many at once as the host has
 * test slots. Workers sharing an ACA_HOME share its disk id, and so its queues.
 *
 * Returned as the shared queue's Worker, whose run() and shutdown() drive all three.
 */
export async function createAcaWorker(options: AcaWorkerOptions): Promise<Worker> {
  const { config } = options;
  // Before anything is opened: a bundle named but missing fails the start at once.
  const code = workflowCode(options.workflowBundle, config.workflowBundleFile);
  const { activities, mcp, close } = createAcaActivities(
    config,
    options.openaiBaseUrl ? { openaiBaseUrl: options.openaiBaseUrl } : {},
  );
  const taskQueue = options.taskQueue ?? config.taskQueue;
  if (mcp) {
    await mcp.started;
    options.onMcpStatus?.(mcp.pool.status());
  }
  const worker = await Worker.create({
    connection: options.connection,
    namespace: config.namespace,
    activities,
    shutdownGraceTime: SHUTDOWN_GRACE_MS,
    taskQueue,
    ...code,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 100,
    ...(config.cachedRuns === null ? {} : { maxCachedWorkflows: config.cachedRuns }),
  });
  const concurrency = options.maxConcurrentActivities
    ? { maxConcurrentActivities: options.maxConcurrentActivities }
    : {};
  const hostWorkers = [
    ...(await createHostWorkers({ connection: options.connection, config, activities, ...concurrency })),
    ...(mcp
      ? await createMcpWorkers({ connection: options.connection, config, taskQueue, mcp, ...concurrency })
      : []),
  ];
  // Every caller runs the worker with run(); closing memory when that ends keeps the embedded
  // database's folder lock from outliving the worker.
  const run = worker.run.bind(worker);
  const shutdown = worker.shutdown.bind(worker);
  worker.run = async () => {
    try {
      const all = await Promise.allSettled([run(), ...hostWorkers.map((w) => w.run())]);
      for (const result of all) if (result.status === 'rejected') throw result.reason;
    } finally {
      await close();
    }
  };
  worker.shutdown = () => {
    for (const w of hostWorkers) if (w.getState() === 'RUNNING') w.shutdown();
    shutdown();
  };
  return worker;
}

/**
 * Installs the SDK runtime once per process, with a Prometheus endpoint when
 * ACA_METRICS_PORT is set: the SDK's own metrics plus the agent's counters.
 */
export function installRuntime(config: AcaConfig, options: { logLevel?: LogLevel } = {}): void {
  const logLevel: LogLevel = config.logLevel ?? options.logLevel ?? 'INFO';
  Runtime.install({
    logger: new DefaultLogger(logLevel, logLineWriter(logLevel)),
    telemetryOptions: {
      // The SDK's native side would otherwise print its own lines (a lost server's retries),
      // coloured with terminal escapes even into a log file; forwarded, they are lines like the rest.
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(config.metricsPort === null
        ? {}
        : {
            metrics: {
              prometheus: { bindAddress: `0.0.0.0:${config.metricsPort}` },
              metricPrefix: 'temporal_',
            },
          }),
    },
  });
}

/** What `aca worker` serves, said once at start: its queues, this host's, and its test slots. */
export function servedLines(config: AcaConfig): string[] {
  const queues = hostRunsOf(config).queues();
  return [
    `aca worker polling task queue "${config.taskQueue}" on ${config.temporalAddress} (namespace ${config.namespace}): runs and their model steps`,
    `  this host's steps on "${queues.host}", its test runs on "${queues.tests}" (${config.testSlots} at a time, ACA_TEST_SLOTS); runs' files under ${config.workspacesRoot}`,
  ];
}

/** `aca worker`: runs until SIGINT or SIGTERM, then lets running activities finish. */
export async function runWorker(config: AcaConfig = loadConfig()): Promise<void> {
  installRuntime(config);
  const connection = await NativeConnection.connect(config.temporalConnection);
  try {
    // The contract has the worker register the search attributes too, so a stack without
    // `aca up` (docker compose, a self-hosted server) can run and list agent runs.
    await registerSearchAttributes(connection, config.namespace).catch((err: unknown) => {
      console.warn(
        `aca worker: could not register the search attributes (${(err as Error).message}); ` +
          'register them with `temporal operator search-attribute create`',
      );
    });
    let mcpLines: string[] = [];
    const worker = await createAcaWorker({
      connection,
      config,
      onMcpStatus: (status) => (mcpLines = mcpStatusLines(config.taskQueue, status)),
    });
    // One write: whoever waits for the first line has the whole of it.
    console.log([...servedLines(config), ...mcpLines].join('\n'));
    await worker.run();
    console.log('aca worker stopped');
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  runWorker().catch((err: unknown) => {
    console.error(`aca worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
