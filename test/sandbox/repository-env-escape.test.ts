/**
 * A repository's `PYTHONPATH` (`aca eval --specs`) in the real sandbox: a src layout imports, and
 * a folder it names, which the code under test writes, cannot put a module in place of pytest or
 * aca's plugin.
 */
import { runTestSuite } from '../../src/sandbox';
import { makeWorkspace, removeWorkspaces } from '../helpers/workspace-fixture';

afterAll(removeWorkspaces);

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
