import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { loadConfig, type AcaConfig } from '../config';
import { RunStateError, UnreachableError, UserInputError } from '../shared/errors';
import {
  AgentIterationKey,
  AgentLanguageKey,
  AgentParentRunKey,
  AgentPassRateKey,
  AgentStateKey,
} from '../shared/search-attributes';
import { LISTED_STATES, type ListedState } from '../shared/types';
import { codingAgentWorkflow } from '../workflows';
import { linkedRunRequest, readEarlierRun, type LinkRequest } from './linked-run';
import { firstLine, validateRunRequest, type StartRunRequest, type ValidRunRequest } from './run-request';
import { runStaticDetails } from './run-static-details';
import { claimRunId } from './claim-run-id';
import { recordStartedRun } from './started-runs';
import { AcaRun, RUN_WORKFLOW_TYPE } from './aca-run';

export { AcaRun, RUN_WORKFLOW_TYPE, type RunClient, type RunHandle } from './aca-run';

/** Starts the workflow of a validated request on a task queue. */
export function startRunWorkflow(
  client: Client,
  request: Pick<ValidRunRequest, 'workflowId' | 'input'>,
  taskQueue: string,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof codingAgentWorkflow>> {
  const { workflowId, input } = request;
  return client.workflow.start(codingAgentWorkflow, {
    workflowId,
    taskQueue,
    args: [input],
    staticSummary: firstLine(input.task),
    staticDetails: runStaticDetails(input, client.options.namespace),
    typedSearchAttributes: [
      { key: AgentStateKey, value: 'INIT' },
      { key: AgentIterationKey, value: 0 },
      { key: AgentPassRateKey, value: 0 },
      { key: AgentLanguageKey, value: input.language },
      ...(input.link ? [{ key: AgentParentRunKey, value: input.link.parentRun }] : []),
    ],
  });
}

/** One line of `AcaClient.list`. */
export interface RunSummary {
  workflowId: string;
  /** The AgentState search attribute: the state the run last published. */
  state: string;
  iteration: number;
  passRate: number | null;
  language: string;
  startTime: string;
  /** Temporal's status of the workflow execution (RUNNING, COMPLETED, …). */
  status: string;
  /** The run it continues, retries or forks (the AgentParentRun search attribute); null if none. */
  parentRun: string | null;
}

export interface ConnectOptions {
  /** Settings as `aca` reads them from the environment; `loadConfig()` when omitted. */
  config?: AcaConfig;
}

/**
 * Starts, finds and lists aca runs: what the `aca` command does, for scripts. Connects with the
 * same settings as the command line (TEMPORAL_ADDRESS, TLS, API key, profiles; see docs/configuration.md).
 */
export class AcaClient {
  constructor(
    readonly temporal: Client,
    readonly config: AcaConfig,
    private readonly ownsConnection = false,
  ) {}

  static async connect(options: ConnectOptions = {}): Promise<AcaClient> {
    const config = options.config ?? loadConfig();
    let connection: Connection;
    try {
      connection = await Connection.connect({ ...config.temporalConnection, connectTimeout: '5s' });
    } catch (err) {
      throw new UnreachableError(
        `cannot reach Temporal at ${config.temporalAddress} (${(err as Error).message}); start it with \`aca up\` or set TEMPORAL_ADDRESS`,
      );
    }
    return new AcaClient(new Client({ connection, namespace: config.namespace }), config, true);
  }

  /** Validates the request (a UserInputError says what is wrong; nothing starts), then starts the run. */
  async start(
    request: StartRunRequest,
    options: { taskQueue?: string; replace?: boolean } = {},
  ): Promise<AcaRun> {
    const valid = await validateRunRequest(request, this.config);
    await claimRunId(this, valid.workflowId, options.replace === true);
    await startRunWorkflow(this.temporal, valid, options.taskQueue ?? this.config.taskQueue);
    recordStartedRun(this.config.home, {
      workflowId: valid.workflowId,
      repo: valid.input.repo?.path ?? null,
    });
    return this.run(valid.workflowId);
  }

  /**
   * Checks a linked run (`continue`, `retry`, `fork` of an ended run) without starting it: a
   * RunStateError or UserInputError says what is wrong.
   */
  async prepareLinked(parentId: string, request: LinkRequest, id?: string): Promise<ValidRunRequest> {
    const parent = this.run(parentId);
    const status = await parent.status();
    if (status === 'RUNNING') {
      throw new RunStateError(
        parentId,
        `run ${parentId} is still going; aca ${request.kind} starts from a run that has ended`,
      );
    }
    const result = await parent.result().catch((err: unknown) => {
      throw new RunStateError(
        parentId,
        `run ${parentId} ended without a result (${status}): ${(err as Error).message}`,
      );
    });
    return linkedRunRequest(await readEarlierRun(this.temporal, parentId, result), request, this.config, id);
  }

  /** Starts a run linked to an ended one (see prepareLinked). */
  async startLinked(
    parentId: string,
    request: LinkRequest,
    options: { id?: string; taskQueue?: string; replace?: boolean } = {},
  ): Promise<AcaRun> {
    const valid = await this.prepareLinked(parentId, request, options.id);
    await claimRunId(this, valid.workflowId, options.replace === true);
    await startRunWorkflow(this.temporal, valid, options.taskQueue ?? this.config.taskQueue);
    recordStartedRun(this.config.home, {
      workflowId: valid.workflowId,
      repo: valid.input.repo?.path ?? null,
    });
    return this.run(valid.workflowId);
  }

  /** A run by id. Nothing is checked until it is used: each method throws RunNotFoundError then. */
  run(workflowId: string): AcaRun {
    return new AcaRun(this, workflowId);
  }

  /**
   * Runs, newest first (at most `limit`, 200 by default), optionally only those in one state, or
   * only the family of one run: every run continued, retried or forked from it, and from those,
   * at any depth.
   */
  async list(options: { state?: ListedState; parent?: string; limit?: number } = {}): Promise<RunSummary[]> {
    let query = `WorkflowType = '${RUN_WORKFLOW_TYPE}'`;
    if (options.state !== undefined) {
      if (!(LISTED_STATES as readonly string[]).includes(options.state)) {
        throw new UserInputError(
          `unknown state "${String(options.state)}"; choose one of ${LISTED_STATES.join(', ')}`,
        );
      }
      query += ` AND AgentState = '${options.state}'`;
    }
    const limit = options.limit ?? 200;
    if (options.parent === undefined) return this.listWhere(query, limit);
    // One query per generation of the family; the state filter applies to the rows shown, not
    // to the runs whose children are looked for.
    const family: RunSummary[] = [];
    const seen = new Set<string>([options.parent]);
    let generation = [options.parent];
    while (generation.length > 0 && family.length < limit) {
      const parents = generation.map(quoteForQuery).join(', ');
      const children = await this.listWhere(
        `WorkflowType = '${RUN_WORKFLOW_TYPE}' AND AgentParentRun IN (${parents})`,
        limit,
      );
      generation = [];
      for (const child of children) {
        if (seen.has(child.workflowId)) continue;
        seen.add(child.workflowId);
        generation.push(child.workflowId);
        if (options.state === undefined || child.state === options.state) family.push(child);
      }
    }
    return family.slice(0, limit).sort((a, b) => b.startTime.localeCompare(a.startTime));
  }

  private async listWhere(query: string, limit: number): Promise<RunSummary[]> {
    const rows: RunSummary[] = [];
    for await (const wf of this.temporal.workflow.list({ query, pageSize: 100 })) {
      const sa = wf.typedSearchAttributes;
      rows.push({
        workflowId: wf.workflowId,
        state: sa.get(AgentStateKey) ?? '-',
        iteration: sa.get(AgentIterationKey) ?? 0,
        passRate: sa.get(AgentPassRateKey) ?? null,
        language: sa.get(AgentLanguageKey) ?? '-',
        startTime: wf.startTime.toISOString(),
        status: wf.status.name,
        parentRun: sa.get(AgentParentRunKey) ?? null,
      });
      if (rows.length >= limit) break;
    }
    return rows.sort((a, b) => b.startTime.localeCompare(a.startTime));
  }

  /** The run's page in the Temporal Web UI. */
  webUrl(workflowId: string): string {
    return `${this.config.uiUrl}/namespaces/${encodeURIComponent(this.config.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.temporal.connection.close();
  }
}

/** A workflow id as a string literal of a list query: quotes and backslashes escaped. */
function quoteForQuery(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
