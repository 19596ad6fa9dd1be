/**
 * Two first-day verdicts end to end (the built command, a worker, the scripted model): a test
 * command whose Python module is missing stops the run before any model call, and a SUCCESS that
 * leaves a test of the task failing (it failed at the baseline and the Planner did not name it)
 * says so on a line of its own, where the Planner was told which tests fail at the baseline.
 */
import { randomBytes } from 'node:crypto';
import type { Scenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });

const EMPTY = 'tests/test_stats.py::test_mean_empty';
const TASK = 'mean() fails on empty input (test_mean_empty); fix it';

const PROJECT = {
  '.gitignore': '__pycache__/\n',
  'stats.py': 'def mean(values):\n    """The mean of values."""\n    return sum(values) / len(values)\n',
  'tests/__init__.py': '',
  'tests/test_stats.py': [
    'from stats import mean',
    '',
    '',
    'def test_mean():',
    '    assert mean([1, 2, 3]) == 2',
    '',
    '',
    'def test_mean_empty():',
    '    assert mean([]) == 0',
    '',
  ].join('\n'),
};

/** A Planner that names no target and a Coder that leaves mean() as it was. */
const lazy: Scenario = {
  name: 'mean-lazy',
  agents: {
    planner: [
      [
        step(
          call('submit_plan', {
            summary: 'Handle empty input in mean()',
            steps: ['return 0 for an empty list'],
            files: ['stats.py'],
          }),
        ),
      ],
    ],
    coder: [
      [
        step(
          call('edit_file', {
            path: 'stats.py',
            old_string: '"""The mean of values."""',
            new_string: '"""The arithmetic mean of values."""',
          }),
        ),
        step(call('finish', { summary: 'clarified the docstring' })),
      ],
    ],
    tester: [
      [
        step(
          call('create_file', {
            path: 'tests/test_mean_more.py',
            content: 'from stats import mean\n\n\ndef test_mean_of_one():\n    assert mean([4]) == 4\n',
          }),
        ),
        step(call('finish', { summary: 'a test of one value' })),
      ],
    ],
  },
};

describe('first-day verdicts', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const newId = (label: string) => `verdict-${label}-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [lazy] });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterAll(async () => {
    removeFixtureRepos();
    await h?.close();
  });

  test('--test-cmd with a Python module that does not exist: FAILED environment, no model call', async () => {
    const repo = makeRepo(PROJECT);
    const id = newId('no-module');
    const asked = h.llm.requests.length;
    const r = await runCli(
      [
        'run',
        TASK,
        '--repo',
        repo,
        '--test-cmd',
        'python3 -m no_such_runner',
        '--id',
        id,
        '--model',
        'scripted:mean-lazy',
        '--json',
      ],
      env,
    );
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ state: 'FAILED', reason: 'environment', iterations: 0 });
    expect(result.error).toContain(
      'the tests cannot run on the base commit: the test command could not start (Python has no module named no_such_runner, exit 1)',
    );
    expect(result.error).toContain('command: python3 -m no_such_runner');
    expect(h.llm.requests.length).toBe(asked);
  });

  test("the issue's example: SUCCESS, and a line of its own names test_mean_empty and suggests --target", async () => {
    const repo = makeRepo(PROJECT);
    const id = newId('excused');
    const r = await runCli(
      ['run', TASK, '--repo', repo, '--id', id, '--model', 'scripted:mean-lazy', '--max-iterations', '2'],
      env,
    );
    expect([r.code, r.stderr]).toEqual([0, expect.any(String)]);
    const warning = `1 test that failed before the run still fails: ${EMPTY}; the run did not have to fix it (no target named it): run again with --target ${EMPTY} to require it`;
    expect(r.stdout).toMatch(/^SUCCESS after 1 iteration/m);
    expect(r.stdout.split('\n')).toContain(`  warning:   ${warning}`);

    const result = await runCli(['result', id], env);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toContain(`  warning:   ${warning}`);
    const json = JSON.parse((await runCli(['result', id, '--json'], env)).stdout) as RunResult;
    expect(json).toMatchObject({
      state: 'SUCCESS',
      failingTests: [EMPTY],
      baseline: { passed: 1, failed: 1 },
    });

    const metadata = (await h.client.workflow.getHandle(id).query('__temporal_workflow_metadata')) as {
      currentDetails?: string;
    };
    expect(metadata.currentDetails?.split('\n')).toContain(
      `- **Failing before and after the run:** ${warning}`,
    );

    // The Planner was told which test fails at the baseline, to name it as a target.
    const planner = h.llm.requests.find((q) => q.scenario === 'mean-lazy' && q.agent === 'planner')!;
    const first = planner.messages.find((m) => m.role === 'user')!.content;
    expect(first).toContain(`Tests that already fail on the base commit, before any change (1):\n- ${EMPTY}`);
  });
});
