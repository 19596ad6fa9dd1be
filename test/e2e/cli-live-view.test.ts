/**
 * What `aca run` and `aca watch` say while a run works, when the model cannot be reached and when
 * the worker dies: the built `aca` runs as a child process without a terminal (one line per
 * change), against `aca worker` processes a test can kill.
 */
import { readRunResult } from '../../src/shared/run-failure';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadScenarios } from '../../src/llm/scenario';
import { getFreePort } from '../../src/temporal/dev-server';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { ACA_BIN, emptyCwd } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

interface Cli {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): Cli {
  const child = spawn(process.execPath, [ACA_BIN, ...args], {
    // An empty folder outside any git work tree: a run there gets a fresh workspace.
    cwd: emptyCwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe('the live view of `aca run` and `aca watch` says what the run is doing', () => {
  let h: Harness;
  const workers: WorkerProcess[] = [];
  const clis: Cli[] = [];

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
  });
  // The embedded database takes one worker process at a time: each test's go when it ends.
  afterEach(async () => {
    for (const cli of clis.splice(0)) cli.child.kill('SIGKILL');
    for (const worker of workers.splice(0)) await worker.kill();
  });
  afterAll(async () => {
    await h?.close();
  });

  test("a model that cannot be reached: each retry of the Planner's step, with the model's URL, and no Node warning", async () => {
    const port = await getFreePort();
    const queue = `${h.taskQueue}-nomodel`;
    const env = { ...h.cliEnv(), ACA_TASK_QUEUE: queue };
    workers.push(
      await spawnWorker({
        ...env,
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_API_KEY: 'sk-none',
      }),
    );
    const id = `no-model-${randomBytes(3).toString('hex')}`;
    const cli = spawnCli(['run', 'Write hello.py', '--no-repo', '--id', id], env);
    clis.push(cli);
    const unreachable = `model endpoint unreachable at http://127.0.0.1:${port}/v1`;
    // Seen from the server: the third attempt of the Planner's step, some seconds in (more than ten
    // polls of the live view: the client's abort listeners used to pile up on one signal, and Node
    // warned about them), then the live view catching up with the attempt before it.
    await until(
      async () => {
        const described = await h.client.workflow
          .getHandle(id)
          .describe()
          .catch(() => null); // not started yet
        return (described?.raw.pendingActivities ?? []).some((p) => (p.attempt ?? 0) >= 3);
      },
      90_000,
      'the third attempt of the step',
    );
    const retryLine = new RegExp(
      `^ {2}planner · model step 1 · attempt 2 of 8, last error: ${escape(unreachable)}: Connection error\\.$`,
      'm',
    );
    await until(() => retryLine.test(cli.output()), 30_000, "the live view's line of the second attempt");
    const out = cli.output();
    expect(out).toMatch(/^PLANNING\s+iteration 0\/15/m);
    expect(out).toMatch(retryLine);
    expect(out).not.toMatch(/Warning|\(node:\d+\)/);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(4);
    await h.client.workflow.getHandle(id).cancel();
  });

  test('a worker that dies in the middle of a step: the live view says its worker stopped answering', async () => {
    const queue = `${h.taskQueue}-lost`;
    const env = { ...h.cliEnv(), ACA_TASK_QUEUE: queue };
    const workerEnv = {
      ...env,
      OPENAI_BASE_URL: h.llm.url,
      OPENAI_API_KEY: 'sk-scripted',
      ACA_HEARTBEAT_TIMEOUT: '5',
    };
    const first = await spawnWorker(workerEnv);
    workers.push(first);
    const id = `lost-worker-${randomBytes(3).toString('hex')}`;
    // The slow-coder scenario's first Coder answer takes 5 s: the worker is killed while it waits.
    const run = spawnCli(
      [
        'run',
        "Write greet(name) in greet.py returning 'Hello, <name>!' (slow-coder)",
        '--model',
        'scripted:slow-coder',
        '--id',
        id,
        '--detach',
        // The CLI runs in the temp folder, which holds files but is no git work tree.
        '--no-repo',
      ],
      env,
    );
    expect(await run.exited).toBe(0);
    const watch = spawnCli(['watch', id], env);
    clis.push(watch);
    await until(
      () => /^ {2}coder · model step 1$/m.test(watch.output()),
      60_000,
      "the Coder's step on the live view",
    );
    await first.kill('SIGKILL');
    await until(
      () =>
        /coder · model step 1 · (no word from its worker .* it may have stopped|attempt 2 of \d+: the worker running the last attempt stopped answering)/.test(
          watch.output(),
        ),
      60_000,
      'the live view to say the worker stopped answering',
    );
    workers.push(await spawnWorker(workerEnv));
    expect(await watch.exited).toBe(0);
    expect(watch.output()).toMatch(/^SUCCESS after 1 iteration/m);
    expect(((await readRunResult(h.client.workflow.getHandle(id))) as RunResult).state).toBe('SUCCESS');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
