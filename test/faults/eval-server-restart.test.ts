/**
 * The Temporal server SIGKILLed and restarted (same ports, same state file) while a batch has an
 * instance done and others in flight: the batch ends with every instance run, evaluated and
 * reported once, and nothing that had completed before the restart is done again.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import type { EvalReport } from '../../src/shared/eval-types';
import { getFreePort, startDevServer, type DevServerHandle } from '../../src/temporal/dev-server';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { goldScenario, makeEvalFixture, type EvalFixture } from '../helpers/eval-fixtures';
import { runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

/** Batch ids of this test run: a batch kept in a shared database keeps its id for good. */
const RUN = randomBytes(3).toString('hex');

const IDS = ['acme__calc-add', 'acme__calc-neg', 'acme__tsutil-sum'];

describe('the Temporal server restarted in the middle of a batch', () => {
  let home: string;
  let server: DevServerHandle | null = null;
  let h: Harness;
  let fixture: EvalFixture;
  let worker: WorkerProcess | null = null;

  afterAll(async () => {
    await worker?.kill();
    await h?.close();
    await server?.stop();
    if (fixture) fs.rmSync(fixture.root, { recursive: true, force: true });
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  test('the batch ends with every instance evaluated once and nothing completed redone', async () => {
    const cliPath = findTemporalCli();
    if (!cliPath) throw new Error('no Temporal CLI: the global setup should have provided one');
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-restart-'));
    // A state file of its own: the restarted server must come back with the batch in it.
    const start = async (port: number, uiPort: number) =>
      startDevServer({ cliPath, dbFile: path.join(home, 'temporal.db'), port, uiPort, headless: true });
    const port = await getFreePort();
    const uiPort = await getFreePort();
    server = await start(port, uiPort);
    const connection = await Connection.connect({ address: server.address });
    await registerSearchAttributes(connection, 'default');
    await connection.close();

    fixture = makeEvalFixture();
    const scenarios = fixture.instances.map((i) =>
      goldScenario(
        i.instance_id,
        /Marker [\w-]+-task/.exec(i.problem_statement)![0],
        fixture.goldFiles.get(i.instance_id)!,
        3000,
      ),
    );
    h = await createHarness({ scenarios, temporal: { address: server.address, namespace: 'default' } });
    const env = { ...h.cliEnv(), OPENAI_BASE_URL: h.llm.url };
    worker = await spawnWorker(env);
    const out = path.join(fixture.root, 'out-restart');
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
        `fx-restart-${RUN}`,
        '--out',
        out,
        '--detach',
      ],
      h.cliEnv(),
    );
    expect(started.code).toBe(0);

    // With two at a time, the third instance's Coder call means one instance has ended (run
    // and evaluation) and two are in flight.
    const coderScenarios = () =>
      new Set(h.llm.requests.filter((r) => r.agent === 'coder').map((r) => r.scenario));
    await until(() => coderScenarios().size === 3, 240_000, 'the third instance under way');
    server.kill('SIGKILL');
    await server.exited;
    server = await start(port, uiPort);

    const shown = await runCli(['eval', 'report', `fx-restart-${RUN}`, '--json'], h.cliEnv(), 600_000);
    expect(shown.code).toBe(0);
    const report = JSON.parse(shown.stdout) as EvalReport;
    expect([...report.submitted_ids].sort()).toEqual([...IDS].sort());
    expect([...report.resolved_ids].sort()).toEqual([...IDS].sort());
    const predictions = fs.readFileSync(path.join(out, 'predictions.jsonl'), 'utf8').trim().split('\n');
    expect(predictions.map((l) => (JSON.parse(l) as { instance_id: string }).instance_id).sort()).toEqual(
      [...IDS].sort(),
    );

    // One run per instance, one evaluation per instance, no model call made twice.
    const history = await h.client.workflow.getHandle(`fx-restart-${RUN}`).fetchHistory();
    const events = history.events ?? [];
    const childStarts = events
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter((id): id is string => typeof id === 'string');
    expect(childStarts.sort()).toEqual(IDS.map((id) => `fx-restart-${RUN}/${id}`).sort());
    const evaluations = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'evaluateEvalInstance',
    );
    expect(evaluations).toHaveLength(IDS.length);
    // Each evaluation ran once: the one done before the restart was not started again after it.
    const evaluationIds = new Set(evaluations.map((e) => String(e.eventId)));
    const evaluationAttempts = events
      .filter((e) => evaluationIds.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')))
      .map((e) => e.activityTaskStartedEventAttributes?.attempt);
    expect(evaluationAttempts).toEqual([1, 1, 1]);
    const repeated = [...h.llm.completedCallsByKey()].filter(([, n]) => n > 1);
    expect(repeated).toEqual([]);
  }, 900_000);
});
