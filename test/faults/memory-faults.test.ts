/**
 * Failure memory under faults: a worker killed in the middle of a memory write, and a database
 * outage in the middle of a run. Both need a real Postgres (DATABASE_URL; required in CI).
 */
import { readRunResult } from '../../src/shared/run-failure';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { Client as PgClient } from 'pg';
import { loadBuiltinScenario, type Scenario } from '../../src/llm/scenario';
import type { RunResult, RunSnapshot } from '../../src/shared/run-types';
import { getFreePort } from '../../src/temporal/dev-server';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { describePostgres, withClient } from '../helpers/pg-test-env';

function scenarioNamed(name: string): Scenario {
  const scenario = structuredClone(loadBuiltinScenario('never-passes'));
  scenario.name = name;
  delete scenario.match;
  return scenario;
}

async function rowCounts(
  url: string,
  workflowId: string,
): Promise<{ tasks: number; iterations: number; failures: number; status: string | null }> {
  return withClient(url, async (c) => {
    const count = async (table: string): Promise<number> =>
      Number(
        (await c.query(`SELECT count(*)::int AS n FROM ${table} WHERE workflow_id = $1`, [workflowId]))
          .rows[0].n,
      );
    const status = await c.query('SELECT status FROM tasks WHERE workflow_id = $1', [workflowId]);
    return {
      tasks: await count('tasks'),
      iterations: await count('iterations'),
      failures: await count('failures'),
      status: (status.rows[0]?.status as string | undefined) ?? null,
    };
  });
}

/** A TCP relay to Postgres that a test can cut (every connection dropped, new ones refused) and restore. */
class CuttableRelay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async up(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describePostgres('failure memory under faults', (databaseUrl) => {
  let h: Harness;
  const tag = randomBytes(4).toString('hex');

  afterEach(async () => {
    await h?.close();
  });

  test('a worker killed in the middle of a memory write: the retry completes it without duplicate rows', async () => {
    const name = `memory-kill-${tag}`;
    h = await createHarness({ scenarios: [scenarioNamed(name)], env: { DATABASE_URL: databaseUrl } });
    // The killed worker's memory write goes to the new one once its heartbeat timeout passes.
    const workerEnv = {
      ...h.cliEnv(),
      OPENAI_BASE_URL: h.llm.url,
      DATABASE_URL: databaseUrl,
      ACA_HEARTBEAT_TIMEOUT: '5',
    };
    let worker: WorkerProcess | null = await spawnWorker(workerEnv);
    // Hold inserts into `failures` so the attempt's write stops between its two statements:
    // the iteration row is committed, the failure row waits.
    const blocker = new PgClient({ connectionString: databaseUrl });
    await blocker.connect();
    try {
      // The tables exist once the worker has opened memory; make sure before locking one.
      await withClient(databaseUrl, (c) => c.query('SELECT 1 FROM failures LIMIT 1')).catch(() => undefined);
      const handle = await h.start(name, { maxIterations: 1, warnAt: 1 });
      const workflowId = handle.workflowId;
      await until(async () => (await rowCounts(databaseUrl, workflowId)).tasks === 1, 60_000, 'the task row');
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE failures IN EXCLUSIVE MODE');
      await until(
        async () => (await rowCounts(databaseUrl, workflowId)).iterations === 1,
        60_000,
        'the iteration row',
      );
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      // The run's last attempt is written by the activity that also stores its outcome.
      expect(pending.map((a) => a.activityType?.name)).toContain('rememberOutcome');

      await worker.kill('SIGKILL');
      worker = null;
      await blocker.query('ROLLBACK');
      worker = await spawnWorker(workerEnv);

      const result = (await readRunResult(handle)) as RunResult;
      expect(result.state).toBe('FAILED');
      expect(result.reason).toBe('max_iterations');
      expect(await rowCounts(databaseUrl, workflowId)).toEqual({
        tasks: 1,
        iterations: 1,
        failures: 1,
        status: 'failed',
      });
    } finally {
      await blocker.end().catch(() => undefined);
      await worker?.kill();
    }
  });

  test('a database outage mid-run: the run waits for the database, then goes on, and every record arrives', async () => {
    const name = `memory-outage-${tag}`;
    const { hostname, port } = new URL(databaseUrl);
    const relay = new CuttableRelay(await getFreePort(), { host: hostname, port: Number(port || 5432) });
    await relay.up();
    const viaRelay = new URL(databaseUrl);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    h = await createHarness({ scenarios: [scenarioNamed(name)], env: { DATABASE_URL: viaRelay.toString() } });
    await h.startWorker();
    try {
      const handle = await h.start(name, { maxIterations: 3, warnAt: 3 });
      await h.waitFor(handle, (s) => s.iterations >= 1);
      await relay.cut();

      // The database holds the conversations and test reports as well as failure memory, so the
      // agents cannot go on without it: the run waits instead of failing. A store call tries again
      // itself for 20 s; then the activity fails and Temporal tries it again. (How long each
      // activity family retries is pinned in test/workflows/activity-errors.test.ts.)
      let retried: { name: string; attempt: number; failure: string } | undefined;
      await until(
        async () => {
          const pending = (await handle.describe()).raw.pendingActivities ?? [];
          const again = pending.find((a) => (a.attempt ?? 0) >= 2 && a.lastFailure);
          if (again) {
            retried = {
              name: again.activityType?.name ?? '',
              attempt: again.attempt ?? 0,
              failure: again.lastFailure?.message ?? '',
            };
          }
          return retried !== undefined;
        },
        60_000,
        'an activity failing against the cut database and trying again',
      );
      expect(retried!.failure).toMatch(/unavailable while trying to/);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect((await handle.query<RunSnapshot>('state')).iterations).toBeLessThan(3);

      await relay.up();
      const result = (await readRunResult(handle)) as RunResult;
      await h.recordHistory(handle, 'memory-outage');
      expect(result.state).toBe('FAILED');
      expect(result.reason).toBe('max_iterations');
      expect(await rowCounts(databaseUrl, handle.workflowId)).toEqual({
        tasks: 1,
        iterations: 3,
        failures: 3,
        status: 'failed',
      });
    } finally {
      await relay.cut();
    }
  });
});
