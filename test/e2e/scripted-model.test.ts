/**
 * `aca scripted-model`: a user's own scenarios served beside the built-in ones, with nothing but
 * the `aca` command: doctor recognises the server, and a run against it (a worker pointed at it)
 * follows the user's scenario to its end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { ACA_BIN, runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { spawnWorker } from '../helpers/worker-process';

const HELLO_TASK = 'Write hello.py with greet(name) returning "Hello, <name>!".';
const helloScenario = {
  name: 'my-hello',
  description: 'A user scenario: one Coder turn writes hello.py, the Tester a test; it passes.',
  task: HELLO_TASK,
  agents: {
    planner: [
      [
        {
          tool_calls: [
            {
              name: 'submit_plan',
              arguments: { summary: 'greet', steps: ['write it'], files: ['hello.py'] },
            },
          ],
        },
      ],
    ],
    coder: [
      [
        {
          tool_calls: [
            {
              name: 'create_file',
              arguments: { path: 'hello.py', content: 'def greet(name):\n    return f"Hello, {name}!"\n' },
            },
          ],
        },
        { tool_calls: [{ name: 'finish', arguments: { summary: 'Wrote hello.py.' } }] },
      ],
    ],
    tester: [
      [
        {
          tool_calls: [
            {
              name: 'create_file',
              arguments: {
                path: 'tests/test_hello.py',
                content:
                  'from hello import greet\n\n\ndef test_greet():\n    assert greet("Ada") == "Hello, Ada!"\n',
              },
            },
          ],
        },
        { tool_calls: [{ name: 'finish', arguments: { summary: 'One test.' } }] },
      ],
    ],
  },
};

describe('aca scripted-model with scenarios of ones own', () => {
  let h: Harness;
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let dir: string;

  beforeAll(async () => {
    h = await createHarness({});
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-my-scenarios-'));
    fs.writeFileSync(path.join(dir, 'my-hello.json'), JSON.stringify(helloScenario, null, 2));
  });
  afterAll(async () => {
    server?.kill('SIGINT');
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a bad scenario file is bad input naming it; a folder without scenarios too', async () => {
    const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bad-scenarios-'));
    try {
      fs.writeFileSync(path.join(bad, 'broken.json'), JSON.stringify({ name: 'x', agents: { coder: 'no' } }));
      const r = await runCli(['scripted-model', '--scenarios', bad], {}, 30_000);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`scenario ${path.join(bad, 'broken.json')} is invalid`);
      fs.rmSync(path.join(bad, 'broken.json'));
      const empty = await runCli(['scripted-model', '--scenarios', bad], {}, 30_000);
      expect([empty.code, empty.stderr.trim()]).toEqual([
        2,
        `aca: --scenarios ${bad} holds no .json scenario`,
      ]);
      const port = await runCli(['scripted-model', '--port', 'eighty'], {}, 30_000);
      expect(port.code).toBe(2);
    } finally {
      fs.rmSync(bad, { recursive: true, force: true });
    }
  });

  test('serves the user scenario; doctor knows the server; a run follows the scenario to SUCCESS', async () => {
    server = spawn(process.execPath, [ACA_BIN, 'scripted-model', '--scenarios', dir], {
      cwd: os.tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (d: Buffer) => (serverOutput += d.toString()));
    // Each line is a write of its own and may arrive in a later chunk: wait for the lines read below.
    await until(
      () =>
        /OPENAI_BASE_URL=(\S+)/.test(serverOutput) &&
        ['my-hello', 'demo-fizzbuzz'].every((name) => serverOutput.includes(`--model scripted:${name}\n`)),
      30_000,
      'the scripted model to listen and list its scenarios',
    );
    const url = /OPENAI_BASE_URL=(\S+)/.exec(serverOutput)![1]!;
    expect(serverOutput).toContain('--model scripted:my-hello');
    expect(serverOutput).toContain('--model scripted:demo-fizzbuzz');

    const doctorWith = async (model: string | undefined) => {
      const r = await runCli(
        ['doctor', '--json'],
        { ...h.cliEnv(), OPENAI_BASE_URL: url, ACA_MODEL: model ?? '' },
        60_000,
      );
      return (JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> })
        .checks;
    };
    const named = await doctorWith('scripted:my-hello');
    expect(named.filter((c) => ['model endpoint', 'model', 'tool calling'].includes(c.name))).toEqual([
      expect.objectContaining({
        name: 'model endpoint',
        status: 'ok',
        detail: expect.stringContaining("aca's scripted model"),
      }),
      expect.objectContaining({ name: 'model', status: 'ok' }),
      expect.objectContaining({ name: 'tool calling', status: 'ok' }),
    ]);
    // The default model names no scenario: a warning that says how runs name one, tools still work.
    const unnamed = await doctorWith(undefined);
    expect(unnamed.find((c) => c.name === 'model')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('scripted:'),
    });
    expect(unnamed.find((c) => c.name === 'tool calling')).toMatchObject({ status: 'ok' });

    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-scripted-home-'));
    const env = {
      ...h.cliEnv(),
      ACA_HOME: home,
      ACA_TASK_QUEUE: `mine-${randomBytes(3).toString('hex')}`,
      OPENAI_BASE_URL: url,
    };
    const worker = await spawnWorker(env);
    try {
      const r = await runCli(['run', HELLO_TASK, '--model', 'scripted:my-hello', '--json'], env);
      expect(r.code).toBe(0);
      const result = JSON.parse(r.stdout) as RunResult;
      expect(result).toMatchObject({ state: 'SUCCESS', iterations: 1, tests: { passed: 1, failed: 0 } });
      expect(fs.readFileSync(path.join(result.workspace, 'hello.py'), 'utf8')).toContain('Hello, {name}!');
    } finally {
      await worker.kill('SIGTERM');
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
