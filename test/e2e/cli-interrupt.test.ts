/**
 * Ctrl-C and live progress, as a user at a terminal gets them: the built `aca` runs as a child
 * process (with pipes, and inside a pseudo-terminal from util-linux `script`), the worker is a
 * harness worker on the task queue the CLI is given, the model is the scripted `slow-coder`
 * scenario whose first Coder answer takes 5 s.
 */
import { readRunResult } from '../../src/shared/run-failure';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunResult, RunSnapshot } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { ACA_BIN, emptyCwd, runCli } from '../helpers/run-cli';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
const SLOW_TASK = "Write greet(name) in greet.py returning 'Hello, <name>!' (slow-coder)";

interface Cli {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function spawnCli(command: string, args: string[], env: NodeJS.ProcessEnv): Cli {
  // Outside any git work tree: started inside one, `aca run` would work on that repository.
  const child = spawn(command, args, {
    cwd: emptyCwd(),
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Ctrl-C and live progress in `aca run` and `aca watch`', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
    await h.startWorker();
    env = h.cliEnv();
  });

  afterAll(async () => {
    await h?.close();
  });

  const snapshot = (handle: WorkflowHandle): Promise<RunSnapshot> =>
    handle.query('state') as Promise<RunSnapshot>;

  test('Ctrl-C in `aca run` pauses the run, says how to resume and re-attach, and exits 4', async () => {
    const id = `interrupt-run-${randomBytes(3).toString('hex')}`;
    const cli = spawnCli(
      process.execPath,
      [ACA_BIN, 'run', SLOW_TASK, '--model', 'scripted:slow-coder', '--id', id],
      env,
    );
    // Without a terminal, progress is one plain line per change; wait for the Coder's slow turn.
    await until(() => /^CODING\s+iteration 1\/15/m.test(cli.output()), 'the CODING progress line');
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(4);
    const out = cli.output();
    expect(out).toContain(`Started ${id}`);
    // The run may leave INIT before the first poll; the Planner's turn (1.5 s) is always seen.
    expect(out).toMatch(/^(INIT|PLANNING)\s+iteration 0\/15\s+pass -\s+\d+s\s+0 tokens$/m);
    expect(out).toMatch(/^PLANNING\s+iteration 0\/15/m);
    expect(out).toContain(`Paused ${id}`);
    expect(out).toContain(`aca resume ${id}`);
    expect(out).toContain(`aca watch ${id}`);

    const handle = h.client.workflow.getHandle(id);
    const paused = await snapshot(handle);
    expect(paused).toMatchObject({ paused: true, state: 'PAUSED', iterations: 1 });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    // The Coder call in flight finishes, but nothing new starts while paused.
    const requestsAtPause = h.llm.requests.length;
    await until(() => h.llm.requests.every((r) => r.status !== 'pending'), 'the call in flight to end');
    // A call scheduled just as the pause arrived may still have gone out.
    const requestsSettled = h.llm.requests.length;
    expect(requestsSettled).toBeLessThanOrEqual(requestsAtPause + 1);
    // A window for something that must not happen: no new model call while paused.
    await sleep(3000);
    expect(h.llm.requests.length).toBe(requestsSettled);
    expect(await snapshot(handle)).toMatchObject({ paused: true, state: 'PAUSED', iterations: 1 });
    expect(`${(await handle.describe()).status.name}`).toBe('RUNNING');

    // What the message says works: resume, then re-attach until the end.
    const resumed = await runCli(['resume', id], env, 60_000);
    expect(resumed).toMatchObject({ code: 0 });
    const watched = await runCli(['watch', id], env, 90_000);
    expect(watched.stderr).toBe('');
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/^SUCCESS after 1 iteration of at most 15$/m);
    const result = (await readRunResult(handle)) as RunResult;
    const { passed } = result.tests;
    expect(passed).toBeGreaterThan(0);
    expect(watched.stdout).toContain(`tests:     ${passed} passed, 0 failed, 0 errors (pass rate 100%)`);
    expect(watched.stdout).toMatch(/tokens: +\d+ prompt \+ \d+ completion/);
    expect(watched.stdout).toContain(
      `web UI:    ${h.config.uiUrl}/namespaces/${h.config.namespace}/workflows/${id}`,
    );
    expect(result.transitions.map((t) => `${t.from}->${t.to}`)).toEqual(
      expect.arrayContaining(['CODING->PAUSED', 'PAUSED->CODING', 'TESTING->SUCCESS']),
    );
  });

  test('Ctrl-C in `aca watch` only stops watching: the run goes on to SUCCESS', async () => {
    const handle = await h.start('slow-coder');
    const cli = spawnCli(process.execPath, [ACA_BIN, 'watch', handle.workflowId], env);
    await until(() => /^(PLANNING|CODING)\s+iteration/m.test(cli.output()), 'a progress line');
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(4);
    expect(cli.output()).toContain(`Stopped watching ${handle.workflowId}; the run goes on`);
    expect(cli.output()).not.toContain('Paused');
    expect((await snapshot(handle)).paused).toBe(false);
    const result = (await readRunResult(handle)) as RunResult;
    expect(result.state).toBe('SUCCESS');
    expect(result.transitions.map((t) => t.to)).not.toContain('PAUSED');
  });

  test('on a terminal, progress is one line redrawn in place, and Ctrl-C from the keyboard pauses', async () => {
    const id = `interrupt-tty-${randomBytes(3).toString('hex')}`;
    // `exec`: with no shell left between the terminal and `aca`, Ctrl-C reaches only `aca`. (A
    // shell such as dash, which `script` uses when SHELL is unset, would die of the SIGINT itself.)
    const command = `exec ${[
      process.execPath,
      ACA_BIN,
      'run',
      SLOW_TASK,
      '--model',
      'scripted:slow-coder',
      '--id',
      id,
    ]
      .map((word) => `'${word.replace(/'/g, `'\\''`)}'`)
      .join(' ')}`;
    // util-linux `script` runs the command on a pseudo-terminal; -e passes its exit code on.
    const cli = spawnCli('script', ['-qefc', command, '/dev/null'], {
      ...env,
      SHELL: '/bin/sh',
      COLUMNS: '200',
      TERM: 'xterm',
    });
    await until(() => /\r\x1b\[2KCODING\s+iteration 1\/15/.test(cli.output()), 'the redrawn CODING line');
    // Ctrl-C once the line has been redrawn a few times over (state changes and clock ticks).
    await until(() => cli.output().split('\r\x1b[2K').length > 3, 'three redraws of the progress line');
    // The slow step the line must end with: opening the turn comes first and may still be drawn.
    await until(
      () => /coder · model step 1[^\r]*$/.test(cli.output()),
      "the Coder's model step on the progress line",
    );
    cli.child.stdin!.write('\x03'); // Ctrl-C, turned into SIGINT by the terminal
    expect(await cli.exited).toBe(4);
    const out = cli.output();
    const progress = out.slice(out.indexOf('\r\x1b[2K'), out.indexOf(`Paused ${id}`));
    // Every state and every second was drawn over the same line: no newline until the pause.
    const redraws = progress.split('\r\x1b[2K').filter(Boolean);
    expect(redraws.length).toBeGreaterThanOrEqual(3);
    for (const frame of redraws.slice(0, -1)) expect(frame).not.toContain('\n');
    // The line changes as the run moves and the clock ticks (PLANNING may pass between two polls).
    expect(new Set(redraws.map((f) => f.trim())).size).toBeGreaterThanOrEqual(2);
    expect(redraws[0]).toMatch(/^(INIT|PLANNING|CODING)\s+iteration [01]\/15/);
    // The terminal echoes the keystroke after the last frame.
    // The line ends with the step in progress: the Coder's slow model step.
    expect(redraws.at(-1)?.trim()).toMatch(
      /^CODING\s+iteration 1\/15\s+pass -\s+\d+s\s+\d+ tokens {2}coder · model step 1(\^C)?$/,
    );
    expect(out).toContain(`aca resume ${id}`);
    const handle = h.client.workflow.getHandle(id);
    expect(await snapshot(handle)).toMatchObject({ paused: true, state: 'PAUSED' });
    await handle.cancel();
    expect(((await readRunResult(handle)) as RunResult).reason).toBe('cancelled');
  });
});
