import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { runCli } from '../helpers/run-cli';
import { getTestTemporal } from '../helpers/temporal-env';

describe('the aca command line', () => {
  const temporal = getTestTemporal();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-cli-'));
  const env = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace, ACA_HOME: home };
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporal.namespace });
  });
  afterAll(async () => {
    await connection?.close();
  });

  const badInputs: Array<[string, string[], RegExp]> = [
    ['an empty task', ['run', ''], /task is empty/],
    ['an unknown language', ['run', 'write code', '--language', 'cobol'], /unknown language "cobol"/],
    [
      'a missing --tests folder',
      ['run', 'write code', '--tests', '/nonexistent/tests'],
      /--tests folder .* does not exist/,
    ],
    [
      '--max-iterations 0',
      ['run', 'write code', '--max-iterations', '0'],
      /--max-iterations must be a whole number of at least 1/,
    ],
    ['--warn-at -3', ['run', 'write code', '--warn-at', '-3'], /--warn-at must be a whole number/],
    ['--max-tokens abc', ['run', 'write code', '--max-tokens', 'abc'], /--max-tokens must be a whole number/],
    [
      '--max-cost 0',
      ['run', 'write code', '--max-cost', '0'],
      /--max-cost must be a positive number of dollars/,
    ],
    ['--max-cost 1e3', ['run', 'write code', '--max-cost', '1e3'], /--max-cost must be a positive number/],
    [
      '--max-cost for a model without a price',
      ['run', 'write code', '--max-cost', '2', '--model', 'my-local-llama'],
      /--max-cost needs the price of model "my-local-llama"/,
    ],
    ['an unknown option', ['run', 'write code', '--frobnicate'], /^aca: unknown option '--frobnicate'$/],
    ['an unknown command', ['fly'], /^aca: unknown command 'fly'$/],
    ['bench, which is not a command of the product', ['bench'], /^aca: unknown command 'bench'$/],
    ['a missing task', ['run'], /^aca: the task is missing: .*aca run - .*--task-file FILE$/],
    [
      'a task over 64 KiB',
      ['run', 't'.repeat(64 * 1024 + 1)],
      /^aca: the task is 65537 bytes, over the limit of 65536 \(64 KiB\)/,
    ],
    [
      'a --task-file that does not exist',
      ['run', '--task-file', '/nonexistent/task.md'],
      /--task-file .* no such file/,
    ],
    [
      'a task both as argument and --task-file',
      ['run', 'write code', '--task-file', '/etc/hostname'],
      /either as an argument or with --task-file, not both/,
    ],
    ['a second task word', ['run', 'write', 'code'], /^aca: too many arguments for 'run'/],
  ];

  test.each(badInputs)('%s exits 2 with one clear line and starts nothing', async (name, args, message) => {
    // A run given an id is looked up by that id afterwards: describe() reads the workflow's own
    // record, where a count over the list API could miss a run visibility has not indexed yet.
    const id = `bad-input-${name.replace(/[^a-z0-9]+/gi, '-')}-${Date.now().toString(36)}`;
    const argv = args[0] === 'run' ? [...args, '--id', id] : args;
    const outcome = await runCli(argv, env);
    expect(outcome.code).toBe(2);
    const lines = outcome.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(outcome.stdout).toBe('');
    await expect(client.workflow.getHandle(id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(fs.existsSync(path.join(home, 'workspaces', id))).toBe(false);
  });

  test.each([
    [['--help']],
    [['help']],
    [['run', '--help']],
    [['help', 'run']],
    [['memory', 'search', '--help']],
  ])('aca %s prints the usage generated from the command definitions and exits 0', async (args) => {
    const outcome = await runCli(args, env);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    const command = args.filter((a) => a !== '--help' && a !== 'help');
    expect(outcome.stdout).toMatch(new RegExp(`^Usage: aca${command.map((c) => ` ${c}`).join('')} `));
    if (command[0] === 'run') {
      for (const option of ['--language', '--tests', '--max-iterations', '--max-steps', '--detach', '--json'])
        expect(outcome.stdout).toContain(option);
    }
    if (command.length === 0) {
      for (const name of [
        'run',
        'status',
        'watch',
        'pause',
        'resume',
        'feedback',
        'cancel',
        'result',
        'list',
        'memory',
        'worker',
        'up',
        'demo',
        'doctor',
      ])
        expect(outcome.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
      // The benchmarks run from the sources (npm run bench), not through the product's CLI.
      expect(outcome.stdout).not.toMatch(/^  bench /m);
      expect(outcome.stdout).toMatch(/Exit codes: 0 success/);
    }
  });

  test('aca with no command prints the usage to stderr and exits 2', async () => {
    const outcome = await runCli([], env);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^Usage: aca /);
  });

  test.each([['status'], ['pause'], ['resume'], ['cancel'], ['result'], ['watch']])(
    '%s of an unknown id exits 2',
    async (command) => {
      const outcome = await runCli([command, 'no-such-run-id'], env);
      expect(outcome.code).toBe(2);
      expect(outcome.stderr.trim()).toBe('aca: unknown run id "no-such-run-id"');
    },
  );

  test('an unreachable Temporal server exits 3', async () => {
    const outcome = await runCli(['status', 'x'], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(outcome.code).toBe(3);
    expect(outcome.stderr).toMatch(/cannot reach Temporal at 127\.0\.0\.1:1/);
  });

  test('aca demo runs the offline scenario to SUCCESS and prints the Web UI link', async () => {
    const outcome = await runCli(['demo'], env);
    expect(outcome.stderr).not.toMatch(/aca: /);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^SUCCESS after 2 iterations/m);
    expect(outcome.stdout).toMatch(/5 passed, 0 failed, 0 errors/);
    const link = /web UI:\s+(\S+)/.exec(outcome.stdout)?.[1] ?? '';
    const id = decodeURIComponent(link.split('/workflows/')[1] ?? '');
    expect(id).toMatch(/^aca-demo-/);
    expect(link).toContain(`/namespaces/${temporal.namespace}/workflows/`);

    // The run is there for `aca list --state SUCCESS` and `aca result --json`.
    const listed = await runCli(['list', '--state', 'SUCCESS', '--json'], env);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ workflowId: string }>).map((r) => r.workflowId)).toContain(
      id,
    );
    const result = await runCli(['result', id, '--json'], env);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({
      workflowId: id,
      state: 'SUCCESS',
      reason: null,
      iterations: 2,
      maxIterations: 15,
      passRate: 1,
    });
    expect(parsed.files).toEqual(expect.arrayContaining(['fizzbuzz.py', 'tests/test_fizzbuzz.py']));
  });
});
