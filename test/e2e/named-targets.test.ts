/**
 * Named targets end to end (the built command, a real worker and Temporal server, the scripted
 * model) on a repository shaped like the case that showed the need: one test fails on the base
 * commit, the task names it, and a lazy attempt with a passing test of its own must not succeed.
 */
import { randomBytes } from 'node:crypto';
import type { Scenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeRepo, removeFixtureRepos, repoDigest } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });
const finish = (summary: string) => step(call('finish', { summary }));
const edit = (file: string, from: string, to: string) =>
  call('edit_file', { path: file, old_string: from, new_string: to });

const TARGET = 'tests/test_more.py::LastTests::test_basic';
const TASK = `Fix last() in mit/more.py: it returns the first item; ${TARGET} must pass`;

/** A small more-itertools: `last` has a planted bug, which only LastTests.test_basic catches. */
const PROJECT = {
  '.gitignore': '__pycache__/\n',
  'mit/__init__.py': 'from .more import first, last\n',
  'mit/more.py': [
    '_marker = object()',
    '',
    '',
    'def first(iterable, default=_marker):',
    '    """Return the first item of *iterable*, or *default* if *iterable* is empty."""',
    '    for item in iterable:',
    '        return item',
    '    if default is _marker:',
    "        raise ValueError('first() was called on an empty iterable')",
    '    return default',
    '',
    '',
    'def last(iterable, default=_marker):',
    '    """Return the last item of *iterable*, or *default* if *iterable* is empty."""',
    '    item = default',
    '    for item in iterable:',
    '        break',
    '    if item is _marker:',
    "        raise ValueError('last() was called on an empty iterable')",
    '    return item',
    '',
  ].join('\n'),
  'tests/__init__.py': '',
  'tests/test_more.py': [
    'from unittest import TestCase',
    '',
    'import pytest',
    '',
    'from mit import first, last',
    '',
    '',
    'class FirstTests(TestCase):',
    '    def test_basic(self):',
    '        self.assertEqual(first([0, 1, 2]), 0)',
    '',
    '    def test_default(self):',
    "        self.assertEqual(first([], 'no'), 'no')",
    '',
    '',
    'class LastTests(TestCase):',
    '    def test_basic(self):',
    '        self.assertEqual(last([0, 1, 2]), 2)',
    '',
    '    def test_default(self):',
    "        self.assertEqual(last([], 'no'), 'no')",
    '',
    '    def test_empty(self):',
    '        with self.assertRaises(ValueError):',
    '            last([])',
    '',
    '',
    "@pytest.mark.parametrize('items', [[1], (1,), 'a'])",
    'def test_one_item(items):',
    '    assert first(items) == last(items)',
    '',
  ].join('\n'),
};

/** The Tester's test, which passes whatever `last` does with longer input. */
const PASSES_ANYWAY = 'from mit import last\n\n\ndef test_last_of_one():\n    assert last([7]) == 7\n';

const plan = (targets?: string[]) => [
  [
    step(
      call('submit_plan', {
        summary: 'Make last() return the last item',
        steps: ['fix the loop in last()'],
        files: ['mit/more.py'],
        ...(targets ? { targets } : {}),
      }),
    ),
  ],
];
const lazy = [
  step(
    edit(
      'mit/more.py',
      '"""Return the last item of *iterable*',
      '"""Return the very last item of *iterable*',
    ),
  ),
  finish('clarified the docstring of last()'),
];
const fix = [
  step(
    edit(
      'mit/more.py',
      '    for item in iterable:\n        break',
      '    for item in iterable:\n        pass',
    ),
  ),
  finish('last() walks the whole iterable'),
];
/** The review's forgery: a conftest.py whose report hook wrapper clears what the test raised. */
const FORGING_CONFTEST = [
  'import pytest',
  '',
  '',
  '@pytest.hookimpl(hookwrapper=True)',
  'def pytest_runtest_makereport(item, call):',
  '    call.excinfo = None',
  // A unittest.TestCase's failure waits on the item until its report is made.
  "    item.__dict__.pop('_excinfo', None)",
  '    yield',
  '',
].join('\n');
const forge = [
  step(call('create_file', { path: 'conftest.py', content: FORGING_CONFTEST })),
  finish('the tests pass now'),
];
/** Breaks first(), which passed at the baseline, and hides it with the same conftest.py. */
const breakAndForge = [
  step(
    edit(
      'mit/more.py',
      '    for item in iterable:\n        return item',
      '    for item in iterable:\n        return None',
    ),
    call('create_file', { path: 'conftest.py', content: FORGING_CONFTEST }),
  ),
  finish('simplified first()'),
];
const tester = [
  [
    step(call('create_file', { path: 'tests/test_last_extra.py', content: PASSES_ANYWAY })),
    finish('wrote it'),
  ],
];
const reflector = [
  [
    step(
      call('submit_analysis', {
        root_cause: 'last() still stops at the first item',
        fix_hypothesis: 'iterate to the end',
        files_to_change: ['mit/more.py'],
        tests_wrong: false,
      }),
    ),
  ],
];

const scenarios: Scenario[] = [
  { name: 'target-lazy', agents: { planner: plan(), coder: [lazy], tester, reflector } },
  { name: 'target-fix', agents: { planner: plan(), coder: [fix], tester, reflector } },
  { name: 'target-forged', agents: { planner: plan(), coder: [forge], tester, reflector } },
  { name: 'regression-forged', agents: { planner: plan(), coder: [breakAndForge], tester, reflector } },
  { name: 'target-plan-lazy', agents: { planner: plan([TARGET]), coder: [lazy], tester, reflector } },
  { name: 'target-plan-fix', agents: { planner: plan([TARGET]), coder: [fix], tester, reflector } },
];

describe('named targets (--target, and the Planner taking one up from the task)', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const newId = (label: string) => `target-${label}-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    h = await createHarness({ scenarios });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  const modelCalls = (scenario: string) => h.llm.requests.filter((r) => r.scenario === scenario).length;

  async function run(scenario: string, ...more: string[]) {
    const repo = makeRepo(PROJECT);
    const id = newId(scenario);
    const r = await runCli(
      [
        'run',
        TASK,
        '--repo',
        repo,
        '--model',
        `scripted:${scenario}`,
        '--id',
        id,
        '--max-iterations',
        '1',
        ...more,
      ],
      env,
    );
    const json = await runCli(['result', id, '--json'], env);
    if (json.code === null || json.stdout.trim() === '') {
      throw new Error(
        `aca result printed nothing (exit ${json.code}): ${r.stdout}\n${r.stderr}\n${json.stderr}`,
      );
    }
    return {
      id,
      repo,
      code: r.code,
      stdout: r.stdout,
      stderr: r.stderr,
      result: JSON.parse(json.stdout) as RunResult,
    };
  }

  test('a lazy attempt and a test that passes anyway: FAILED, and the summary names the target', async () => {
    const { id, code, stdout, result } = await run('target-lazy', '--target', TARGET);
    await h.recordHistory(h.client.workflow.getHandle(id), 'repo-target-failed');
    expect(code).toBe(1);
    expect(result).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      iterations: 1,
      // LastTests.test_basic failed on the base commit: excused for any other test, not for a target.
      baseline: { passed: 7, failed: 1 },
      tests: { passed: 8, failed: 1, errors: 0 },
      regressions: [],
      targets: [{ id: TARGET, outcome: 'failed' }],
      failingTests: [TARGET],
      unknownTargets: [],
    });
    expect(stdout).toContain(`targets:   ${TARGET} failed`);
    expect(stdout).toContain(`failing:   ${TARGET}`);
    const status = await runCli(['status', id], env);
    expect(status.stdout).toContain(`targets: ${TARGET} failed`);
    // The Coder and the Reflector were told which test must pass.
    const coder = h.llm.requests.find((r) => r.scenario === 'target-lazy' && r.agent === 'coder')!;
    expect(coder.messages.find((m) => m.role === 'user')!.content).toContain(`- ${TARGET}: failed`);
  });

  test('without a target, the same failure is excused as one that failed at the baseline', async () => {
    const { code, result } = await run('target-lazy');
    expect(code).toBe(0);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      tests: { passed: 8, failed: 1, errors: 0 },
      targets: [],
      failingTests: [TARGET],
    });
  });

  test('a conftest.py that clears what the target raised: FAILED, the target failed, nothing regressed', async () => {
    const { code, result } = await run('target-forged', '--target', TARGET);
    expect(code).toBe(1);
    expect(result).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      regressions: [],
      targets: [{ id: TARGET, outcome: 'failed' }],
      failingTests: [TARGET],
    });
  });

  test('the same conftest.py cannot hide a regression: FAILED, the broken test named', async () => {
    const { code, result } = await run('regression-forged');
    expect(code).toBe(1);
    expect(result.state).toBe('FAILED');
    expect(result.regressions).toEqual(
      expect.arrayContaining(['tests/test_more.py::FirstTests::test_basic']),
    );
  });

  test('the same with a real fix: SUCCESS, the target passed', async () => {
    const { code, result } = await run('target-fix', '--target', TARGET);
    expect(code).toBe(0);
    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 1,
      baseline: { passed: 7, failed: 1 },
      tests: { passed: 9, failed: 0, errors: 0 },
      targets: [{ id: TARGET, outcome: 'passed' }],
      failingTests: [],
    });
  });

  test('a target named only in the task, taken up by the Planner, is held to the same rule', async () => {
    const lazyRun = await run('target-plan-lazy');
    await h.recordHistory(h.client.workflow.getHandle(lazyRun.id), 'repo-plan-target');
    expect(lazyRun.code).toBe(1);
    expect(lazyRun.result).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      targets: [{ id: TARGET, outcome: 'failed' }],
      failingTests: [TARGET],
    });
    expect(lazyRun.stdout).toContain(`targets:   ${TARGET} failed`);

    const fixed = await run('target-plan-fix');
    expect(fixed.code).toBe(0);
    expect(fixed.result).toMatchObject({ state: 'SUCCESS', targets: [{ id: TARGET, outcome: 'passed' }] });
  });

  test('a target that does not exist is bad input: exit 2 and one line, before any model call', async () => {
    const repo = makeRepo(PROJECT);
    const before = repoDigest(repo);
    // No such file at the base commit: refused before anything starts.
    const noFile = newId('nofile');
    const r = await runCli(
      [
        'run',
        TASK,
        '--repo',
        repo,
        '--model',
        'scripted:target-lazy',
        '--id',
        noFile,
        '--target',
        'tests/test_nope.py',
      ],
      env,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^aca: --target tests\/test_nope\.py: there is no file tests\/test_nope\.py at the base commit [0-9a-f]{10} of /,
      ),
    ]);
    expect((await runCli(['status', noFile], env)).code).toBe(2);

    // The file exists but holds no such test: the baseline tells, and the run ends before the Planner.
    const calls = modelCalls('target-lazy');
    const noTest = newId('notest');
    const missing = 'tests/test_more.py::LastTests::test_nope';
    const m = await runCli(
      [
        'run',
        TASK,
        '--repo',
        repo,
        '--model',
        'scripted:target-lazy',
        '--id',
        noTest,
        '--target',
        missing,
        '--json',
      ],
      env,
    );
    await h.recordHistory(h.client.workflow.getHandle(noTest), 'repo-unknown-target');
    expect(m.code).toBe(2);
    expect(m.stderr).toContain(
      `aca: no such test: ${missing} (a target must name a test or test file that exists at the base commit; 8 tests ran there)`,
    );
    expect(JSON.parse(m.stdout)).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      iterations: 0,
      unknownTargets: [missing],
      targets: [{ id: missing, outcome: 'missing' }],
    });
    expect(modelCalls('target-lazy')).toBe(calls);
    expect(repoDigest(repo)).toEqual(before);
  });
});
