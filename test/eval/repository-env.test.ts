/**
 * A repository's own variables (`aca eval --specs`): which the specs file may give, how they reach
 * the test process, and that a `PYTHONPATH` into the workspace (where the code under test writes)
 * cannot put a module of the workspace in place of pytest or aca's plugin.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readSpecs } from '../../src/eval/specs';
import { runTestSuite, withRepositoryEnv } from '../../src/sandbox';
import { UserInputError } from '../../src/shared/errors';
import { pythonPathFolders, testEnvProblem } from '../../src/shared/test-env';
import { makeWorkspace, removeWorkspaces } from '../sandbox/workspace-fixture';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-specs-'));
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  removeWorkspaces();
});

function specsFile(value: unknown): string {
  const file = path.join(dir, `specs-${Math.random().toString(16).slice(2)}.json`);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('--specs FILE', () => {
  test('each repository its test command, setup command and variables', () => {
    const specs = readSpecs(
      specsFile({
        'pallets/itsdangerous': { env: { PYTHONPATH: 'src', DJANGO_SETTINGS_MODULE: 'x.settings' } },
        'o/n': { testCommand: 'pytest -q', setupCommand: 'make build' },
      }),
    );
    expect(specs.get('pallets/itsdangerous')).toEqual({
      testCommand: null,
      setupCommand: null,
      env: { PYTHONPATH: 'src', DJANGO_SETTINGS_MODULE: 'x.settings' },
    });
    expect(specs.get('o/n')).toEqual({ testCommand: 'pytest -q', setupCommand: 'make build', env: {} });
  });

  test.each([
    ['not JSON', '{', /cannot read/],
    ['a list', '[]', /not a JSON object/],
    ['a key that is not owner/name', { itsdangerous: {} }, /not owner\/name/],
    ['an unknown field', { 'o/n': { testCmd: 'x' } }, /allowed: testCommand, setupCommand, env/],
    ['a command over two lines', { 'o/n': { setupCommand: 'a\nb' } }, /one line/],
    ['LD_PRELOAD', { 'o/n': { env: { LD_PRELOAD: './evil.so' } } }, /LD_PRELOAD is reserved/],
    ['PATH', { 'o/n': { env: { PATH: '/tmp' } } }, /PATH is set by aca's sandbox/],
    ['ACA_JUNIT_XML', { 'o/n': { env: { ACA_JUNIT_XML: '/tmp/x' } } }, /reserved/],
    ['PYTHONSTARTUP', { 'o/n': { env: { PYTHONSTARTUP: 'evil.py' } } }, /only PYTHONPATH/],
    [
      'a PYTHONPATH outside the repository',
      { 'o/n': { env: { PYTHONPATH: 'src:/etc' } } },
      /"\/etc" is not a folder inside/,
    ],
    [
      'a PYTHONPATH above the repository',
      { 'o/n': { env: { PYTHONPATH: '../other' } } },
      /not a folder inside/,
    ],
    ['a value that is not a string', { 'o/n': { env: { X: 1 } } }, /env\.X/],
  ])('refuses %s (exit 2)', (_name, value, message) => {
    const file = specsFile(value);
    expect(() => readSpecs(file)).toThrow(UserInputError);
    expect(() => readSpecs(file)).toThrow(message);
  });
});

describe('the variables in the test process', () => {
  test("the runner's own values win; PYTHONPATH's folders from the workspace, before aca's", () => {
    const env = withRepositoryEnv(
      { PATH: '/usr/bin', PYTHONPATH: '/aca/runner', HOME: '/tmp/h' },
      { PYTHONPATH: 'src:./lib/:', FLAG: 'on' },
      '/workspace',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/tmp/h',
      FLAG: 'on',
      PYTHONPATH: '/workspace/src:/workspace/lib:/aca/runner',
    });
    expect(pythonPathFolders({ PYTHONPATH: '.:src' })).toEqual(['.', 'src']);
  });

  test('a refused variable that reaches the sandbox anyway stops the run', () => {
    expect(testEnvProblem({ LD_AUDIT: 'x.so' })).toMatch(/reserved/);
    expect(() => withRepositoryEnv({}, { LD_AUDIT: 'x.so' }, '/workspace')).toThrow(/refused/);
  });
});

describe('a src layout in the sandbox', () => {
  const files = {
    'src/pkg/__init__.py': 'def add(a, b):\n    return a - b\n',
    'tests/test_pkg.py':
      'from pkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_same():\n    assert add(1, 0) == 1\n',
  };

  test('the package imports with PYTHONPATH=src, and not without', async () => {
    const without = await runTestSuite({
      workspace: makeWorkspace(files),
      language: 'python',
      mode: 'bwrap',
    });
    expect(without.cases.some((c) => c.status === 'passed')).toBe(false);
    const withEnv = await runTestSuite({
      workspace: makeWorkspace(files),
      language: 'python',
      mode: 'bwrap',
      env: { PYTHONPATH: 'src' },
    });
    expect(withEnv.outcome).toBe('completed');
    expect(withEnv.cases.map((c) => [c.name, c.status]).sort()).toEqual([
      ['tests/test_pkg.py::test_add', 'failed'],
      ['tests/test_pkg.py::test_same', 'passed'],
    ]);
  });

  test('a pytest.py or aca_results.py in a PYTHONPATH folder is never imported in place of the real ones', async () => {
    // Each would end the process at once with status 0 and no report, were it imported first.
    const planted = 'import os\nos._exit(0)\n';
    const report = await runTestSuite({
      workspace: makeWorkspace({
        ...files,
        'src/pytest.py': planted,
        'src/aca_results.py': planted,
        'src/_pytest/__init__.py': planted,
      }),
      language: 'python',
      mode: 'bwrap',
      env: { PYTHONPATH: 'src' },
    });
    expect(report.cases.find((c) => c.name === 'tests/test_pkg.py::test_add')?.status).toBe('failed');
    expect(report.cases.find((c) => c.name === 'tests/test_pkg.py::test_same')?.status).toBe('passed');
  });
});
