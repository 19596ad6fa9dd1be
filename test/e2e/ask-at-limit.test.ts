/**
 * `--on-limit ask` end to end, with the command line a user types: a run that reaches its limit
 * waits for `aca extend`; the wait survives a worker SIGKILL and a server restart; a wait nobody
 * answers ends FAILED max_iterations; and the bad input around it exits 2.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadBuiltinScenario } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import type { RunResult, RunSnapshot } from '../../src/shared/run-types';
import {
  startDevServer,
  startDevServerOnFreePorts,
  type DevServerHandle,
} from '../../src/temporal/dev-server';
import { registerSearchAttributes } from '../../src/temporal/search-attributes';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

const FIZZBUZZ = loadBuiltinScenario('demo-fizzbuzz').task!;

describe('a run that asks at its iteration limit', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-ask-'));
  const dbFile = path.join(home, 'temporal.db');
  let port: number | undefined;
  let server: DevServerHandle;
  let llm: ScriptedLlmServer;
  let worker: WorkerProcess | null = null;
  let env: NodeJS.ProcessEnv;

  const startServer = async () => {
    const cliPath = findTemporalCli();
    if (!cliPath) throw new Error('no Temporal CLI: the global setup should have provided one');
    // The first start chooses the port; a restart comes back where the worker looks for it.
    server = port
      ? await startDevServer({ cliPath, dbFile, port, headless: true })
      : await startDevServerOnFreePorts({ cliPath, dbFile, headless: true });
    port = Number(server.address.split(':').pop());
  };
  const status = async (id: string): Promise<RunSnapshot> => {
    const out = await runCli(['status', id, '--json'], env);
    expect(out.code).toBe(0);
    return JSON.parse(out.stdout) as RunSnapshot;
  };
  const waitingAtLimit = async (id: string): Promise<RunSnapshot> => {
    let last: RunSnapshot | null = null;
    await until(
      async () => {
        last = await status(id);
        return last.waiting === 'limit';
      },
      90_000,
      `${id} waiting at its limit`,
    );
    return last!;
  };
  const askingRun = (id: string, ...more: string[]) => [
    'run',
    FIZZBUZZ,
    '--model',
    'scripted:demo-fizzbuzz',
    '--max-iterations',
    '1',
    '--on-limit',
    'ask',
    '--detach',
    '--id',
    id,
    ...more,
  ];

  beforeAll(async () => {
    await startServer();
    const connection = await Connection.connect({ address: server.address });
    await registerSearchAttributes(connection, 'default');
    await connection.close();
    llm = await new ScriptedLlmServer().start();
    env = {
      TEMPORAL_ADDRESS: server.address,
      ACA_TASK_QUEUE: 'ask-at-limit',
      ACA_HOME: home,
      OPENAI_BASE_URL: llm.url,
    };
    worker = await spawnWorker(env);
  }, 120_000);

  afterAll(async () => {
    await worker?.kill();
    await server?.stop();
    await llm?.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  test('it waits; a worker SIGKILL and a server restart change nothing; extend takes it to SUCCESS', async () => {
    const id = 'ask-extended';
    const started = await runCli(askingRun(id), env);
    expect([started.code, started.stdout.trim()]).toEqual([0, id]);
    const waiting = await waitingAtLimit(id);
    expect(waiting).toMatchObject({ state: 'REFLECTING', iterations: 1, maxIterations: 1 });
    // Listed as WAITING: a run that needs someone to answer is found by `aca list --state waiting`.
    await until(
      async () => {
        const listed = await runCli(['list', '--state', 'waiting', '--json'], env);
        return (JSON.parse(listed.stdout) as Array<{ workflowId: string; state: string }>).some(
          (r) => r.workflowId === id && r.state === 'WAITING',
        );
      },
      30_000,
      `${id} in aca list --state waiting`,
    );
    const live = await runCli(['status', id], env);
    expect(live.stdout).toMatch(
      /^  waiting at its iteration limit: aca extend ask-extended --iterations N gives it N more attempts$/m,
    );

    await worker!.kill('SIGKILL');
    server.kill('SIGKILL');
    await server.exited;
    await startServer();
    worker = await spawnWorker(env);
    expect(await status(id)).toMatchObject({ waiting: 'limit', iterations: 1 });

    const feedback = await runCli(['feedback', id, 'Check multiples of 15 first.'], env);
    expect(feedback.code).toBe(0);
    const extended = await runCli(['extend', id, '--iterations', '2', '--feedback', 'Keep it short.'], env);
    expect([extended.code, extended.stdout.trim()]).toEqual([0, `Extended ${id}: 2 more attempts, up to 3.`]);
    const result = await runCli(['result', id, '--json'], env);
    const outcome = JSON.parse(result.stdout) as RunResult;
    expect(outcome).toMatchObject({ state: 'SUCCESS', iterations: 2, maxIterations: 3 });
    // The second Coder turn was told both texts, in the order they came.
    const coder2 = llm.requests.find((r) => r.agent === 'coder' && r.turn === 1 && r.step === 0)!;
    const opening = String(coder2.messages.find((m) => m.role === 'user')?.content);
    expect(opening.indexOf('Check multiples of 15 first.')).toBeGreaterThan(-1);
    expect(opening.indexOf('Keep it short.')).toBeGreaterThan(
      opening.indexOf('Check multiples of 15 first.'),
    );

    const client = new Client({ connection: await Connection.connect({ address: server.address }) });
    const history = await client.workflow.getHandle(id).fetchHistory();
    const timers = history.events!.filter((e) => e.timerStartedEventAttributes);
    expect(timers).toHaveLength(1);
    expect(Number(timers[0]!.timerStartedEventAttributes!.startToFireTimeout!.seconds)).toBe(24 * 3600);
    await client.connection.close();

    const again = await runCli(['extend', id, '--iterations', '1'], env);
    expect([again.code, again.stderr.trim()]).toEqual([
      2,
      `aca: run ${id} is not waiting at its iteration limit (it ended SUCCESS)`,
    ]);
  }, 240_000);

  test('a wait nobody answers ends FAILED max_iterations when --ask-timeout is over', async () => {
    const id = 'ask-timed-out';
    expect((await runCli(askingRun(id, '--ask-timeout', '1s'), env)).code).toBe(0);
    const result = await runCli(['result', id, '--json'], env);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      iterations: 1,
    });
  }, 120_000);

  test.each([
    [
      'an --ask-timeout that does not parse',
      ['--on-limit', 'ask', '--ask-timeout', 'soon'],
      /--ask-timeout must be a duration/,
    ],
    [
      'an --on-limit that is neither fail nor ask',
      ['--on-limit', 'maybe'],
      /--on-limit must be "fail" or "ask"/,
    ],
    [
      'an --ask-timeout without --on-limit ask',
      ['--ask-timeout', '1h'],
      /--ask-timeout needs --on-limit ask/,
    ],
  ])('%s exits 2 and starts nothing', async (_name, more, message) => {
    const id = `ask-bad-${Math.random().toString(36).slice(2, 8)}`;
    const out = await runCli(
      ['run', FIZZBUZZ, '--model', 'scripted:demo-fizzbuzz', '--id', id, ...more],
      env,
    );
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(message);
    expect((await runCli(['status', id], env)).code).toBe(2);
  });

  test('extend of a run that is not waiting, or without --iterations, exits 2', async () => {
    const id = 'fail-at-limit';
    const run = ['run', FIZZBUZZ, '--model', 'scripted:demo-fizzbuzz', '--max-iterations', '1', '--id', id];
    expect((await runCli(run, env)).code).toBe(1);
    const ended = await runCli(['extend', id, '--iterations', '1'], env);
    expect([ended.code, ended.stderr.trim()]).toEqual([
      2,
      `aca: run ${id} is not waiting at its iteration limit (it ended FAILED (max_iterations))`,
    ]);
    const noCount = await runCli(['extend', id], env);
    expect([noCount.code, noCount.stderr.trim()]).toEqual([
      2,
      'aca: --iterations N is needed: how many more attempts',
    ]);
    const unknown = await runCli(['extend', 'no-such-run', '--iterations', '1'], env);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([2, 'aca: unknown run id "no-such-run"']);
  }, 120_000);
});
