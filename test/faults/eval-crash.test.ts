/**
 * A worker SIGKILLed while a batch has runs in flight: a new worker finishes the batch, every
 * instance is reported once, no instance's run is started twice and no completed model call is
 * made again.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EvalReport } from '../../src/shared/eval-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { goldScenario, makeEvalFixture, type EvalFixture } from '../helpers/eval-fixtures';
import { runCli } from '../helpers/run-cli';
import { getFreePort } from '../../src/temporal/dev-server';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

/** Batch ids of this test run: a batch kept in a shared database keeps its id for good. */
const RUN = randomBytes(3).toString('hex');

const IDS = ['acme__calc-add', 'acme__calc-neg', 'acme__tsutil-sum'];

describe('a worker killed in the middle of a batch', () => {
  let h: Harness;
  let fixture: EvalFixture;
  let worker: WorkerProcess | null = null;

  beforeAll(async () => {
    fixture = makeEvalFixture();
    const scenarios = fixture.instances.map((i) =>
      goldScenario(
        i.instance_id,
        /Marker [\w-]+-task/.exec(i.problem_statement)![0],
        fixture.goldFiles.get(i.instance_id)!,
        4000,
      ),
    );
    h = await createHarness({ scenarios });
  });
  afterAll(async () => {
    await worker?.kill();
    await h?.close();
    if (fixture) fs.rmSync(fixture.root, { recursive: true, force: true });
  });

  test('a new worker ends the batch with every instance reported once', async () => {
    // The killed worker's model calls go to the new one once their heartbeat timeout passes.
    const env = { ...h.cliEnv(), OPENAI_BASE_URL: h.llm.url, ACA_HEARTBEAT_TIMEOUT: '5' };
    worker = await spawnWorker(env);
    const out = path.join(fixture.root, 'out-crash');
    const started = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--only',
        IDS.join(','),
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--concurrency',
        '2',
        '--id',
        `fx-crash-${RUN}`,
        '--out',
        out,
        '--detach',
      ],
      h.cliEnv(),
    );
    expect(started.code).toBe(0);
    expect(started.stdout.trim()).toBe(`fx-crash-${RUN}`);
    // Two runs in flight, each in its Coder's slow call.
    await until(
      () => new Set(h.llm.requests.filter((r) => r.agent === 'coder').map((r) => r.scenario)).size === 2,
      120_000,
      'two Coder calls',
    );
    await worker.kill('SIGKILL');
    const metricsPort = await getFreePort();
    worker = await spawnWorker({ ...env, ACA_METRICS_PORT: String(metricsPort) });

    const shown = await runCli(['eval', 'report', `fx-crash-${RUN}`, '--json'], h.cliEnv(), 600_000);
    expect(shown.code).toBe(0);
    const report = JSON.parse(shown.stdout) as EvalReport;
    expect([...report.submitted_ids].sort()).toEqual([...IDS].sort());
    expect([...report.resolved_ids].sort()).toEqual([...IDS].sort());
    const predictions = fs.readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n');
    expect(predictions.map((l) => (JSON.parse(l) as { instance_id: string }).instance_id).sort()).toEqual(
      [...IDS].sort(),
    );

    const history = await h.client.workflow.getHandle(`fx-crash-${RUN}`).fetchHistory();
    const childStarts = (history.events ?? [])
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter((id): id is string => typeof id === 'string');
    expect(childStarts.sort()).toEqual(IDS.map((id) => `fx-crash-${RUN}/${id}`).sort());
    const repeated = [...h.llm.completedCallsByKey()].filter(([, n]) => n > 1);
    expect(repeated).toEqual([]);

    // The batch's page in the Web UI: its counts and cost.
    const metadata = (await h.client.workflow
      .getHandle(`fx-crash-${RUN}`)
      .query('__temporal_workflow_metadata')) as {
      currentDetails?: string;
    };
    expect(metadata.currentDetails).toContain('**Instances:** 3/3 done, 0 running');
    expect(metadata.currentDetails).toContain('**Resolved:** 3;');
    // Every instance ended under the second worker: its Prometheus counter has them all.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const resolved = metrics
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('aca_eval_instances') &&
          l.includes(`batch="fx-crash-${RUN}"`) &&
          l.includes('status="resolved"'),
      )
      .map((l) => Number(l.trim().split(/\s+/).pop()));
    expect(resolved.reduce((a, b) => a + b, 0)).toBe(3);
  });

  test('aca pause, resume and cancel of a batch: paused with its run, resumed, cancelled with the rest not submitted', async () => {
    const env = { ...h.cliEnv(), OPENAI_BASE_URL: h.llm.url };
    await worker?.kill();
    worker = await spawnWorker(env);
    const before = h.llm.requests.length;
    const started = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--only',
        IDS.join(','),
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--concurrency',
        '1',
        '--id',
        `fx-ctl-${RUN}`,
        '--out',
        path.join(fixture.root, 'out-ctl'),
        '--detach',
      ],
      h.cliEnv(),
    );
    expect(started.code).toBe(0);
    await until(
      () => h.llm.requests.slice(before).some((r) => r.agent === 'coder'),
      120_000,
      'the first Coder call',
    );
    const paused = await runCli(['pause', `fx-ctl-${RUN}`], h.cliEnv());
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`Paused batch fx-ctl-${RUN}`);
    const status = JSON.parse(
      (await runCli(['eval', 'status', `fx-ctl-${RUN}`, '--json'], h.cliEnv())).stdout,
    ) as {
      paused: boolean;
      running: number;
      runningIds: string[];
    };
    expect(status).toMatchObject({ paused: true, running: 1 });
    const child = `fx-ctl-${RUN}/${status.runningIds[0]}`;
    await until(
      async () => ((await h.client.workflow.getHandle(child).query('state')) as { paused: boolean }).paused,
      30_000,
      'the run paused',
    );
    // The resumed run must still be running when the cancel arrives: its model answers slowly.
    h.llm.setDelay(5_000);
    try {
      expect((await runCli(['resume', `fx-ctl-${RUN}`], h.cliEnv())).code).toBe(0);
      await until(
        async () =>
          !((await h.client.workflow.getHandle(child).query('state')) as { paused: boolean }).paused,
        30_000,
        'the run resumed',
      );
      const cancelled = await runCli(['cancel', `fx-ctl-${RUN}`], h.cliEnv());
      expect(cancelled.code).toBe(0);
    } finally {
      h.llm.setDelay(0);
    }
    const report = JSON.parse(
      (await runCli(['eval', 'report', `fx-ctl-${RUN}`, '--json'], h.cliEnv(), 300_000)).stdout,
    ) as EvalReport;
    expect(report.total_instances).toBe(3);
    expect(report.submitted_instances).toBeLessThan(3);
    expect(report.error_ids).toContain(status.runningIds[0]);
    expect((await runCli(['cancel', `fx-ctl-${RUN}`], h.cliEnv())).code).toBe(2);
  });
});
