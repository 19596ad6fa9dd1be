/**
 * The repository's own tests judged in the verdict process from the base commit's versions: what
 * decides named targets, the regression check and an evaluation's score. Each forgery keeps add()
 * broken; each is first shown to fool the run's own pytest (the account these verdicts used to
 * come from), then not to fool the verdict.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { prepareTrustedTests } from '../../../src/activities/trusted-tests';
import { runTestSuite, type BaseTests } from '../../../src/sandbox';
import type { TestRunReport } from '../../../src/shared/types';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';

afterAll(removeWorkspaces);

const TEST_CALC = `from calc import add


def test_add():
    assert add(2, 3) == 5


def test_zero():
    assert add(0, 0) == 0
`;
const BROKEN = 'def add(a, b):\n    return a - b\n';
const CORRECT = 'def add(a, b):\n    return a + b\n';
/** The review's forgery: a hook wrapper that clears what the test's call raised. */
const FORGING_CONFTEST = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    call.excinfo = None
    yield
`;

const outcomes = (report: TestRunReport): string[] => report.cases.map((c) => `${c.name} ${c.status}`).sort();

interface Setup {
  /** The base commit's files (test files and conftest.py). */
  base: Record<string, string>;
  /** What the workspace holds now. */
  workspace: Record<string, string>;
  /** Which of the base files are judged as base tests. */
  judged: string[];
  /** The base files that are helpers in its test folders. */
  helpers?: string[];
  importPaths?: string[];
  prepare?: (workspace: string) => void;
}

async function run(setup: Setup, judgedByVerdict = true): Promise<TestRunReport> {
  const sourceDir = makeWorkspace(setup.base);
  const conftests = Object.keys(setup.base).filter((f) => path.posix.basename(f) === 'conftest.py');
  const configDir = makeWorkspace(Object.fromEntries(conftests.map((f) => [f, setup.base[f]!])));
  const workspace = makeWorkspace(setup.workspace);
  setup.prepare?.(workspace);
  const baseTests: BaseTests = {
    sourceDir,
    files: setup.judged,
    ...(setup.helpers ? { helpers: setup.helpers } : {}),
    config: { sourceDir: configDir, files: conftests, ini: null },
    ...(setup.importPaths ? { importPaths: setup.importPaths } : {}),
  };
  return runTestSuite({
    workspace,
    language: 'python',
    mode: 'bwrap',
    ...(judgedByVerdict ? { baseTests } : {}),
  });
}

describe("the repository's own tests, judged from the base commit", () => {
  test("a conftest.py the run added cannot make a broken add() pass (it did with the run's own pytest)", async () => {
    const setup: Setup = {
      base: { 'tests/test_calc.py': TEST_CALC },
      workspace: { 'tests/test_calc.py': TEST_CALC, 'calc.py': BROKEN, 'conftest.py': FORGING_CONFTEST },
      judged: ['tests/test_calc.py'],
    };
    const forged = await run(setup, false);
    expect(outcomes(forged)).toEqual([
      'tests/test_calc.py::test_add passed',
      'tests/test_calc.py::test_zero passed',
    ]);
    const judged = await run(setup);
    expect(outcomes(judged)).toEqual([
      'tests/test_calc.py::test_add failed',
      'tests/test_calc.py::test_zero passed',
    ]);
  });

  test('a test file the run weakened is judged as the base commit has it; tests the run added to it still count', async () => {
    const weakened = `from calc import add


def test_add():
    assert True


def test_zero():
    assert add(0, 0) == 0


def test_added_by_the_run():
    assert add(1, 0) == 1
`;
    const report = await run({
      base: { 'tests/test_calc.py': TEST_CALC },
      workspace: { 'tests/test_calc.py': weakened, 'calc.py': BROKEN },
      judged: ['tests/test_calc.py'],
    });
    expect(outcomes(report)).toEqual([
      'tests/test_calc.py::test_add failed',
      'tests/test_calc.py::test_added_by_the_run passed',
      'tests/test_calc.py::test_zero passed',
    ]);
  });

  test("a correct add() passes, with the base commit's own conftest.py fixtures; the run's new test files run too", async () => {
    const withFixture = `def test_fixture(offset):
    from calc import add
    assert add(offset, 1) == 11
`;
    const report = await run({
      base: {
        'tests/test_calc.py': TEST_CALC,
        'tests/test_fixture.py': withFixture,
        'tests/conftest.py': 'import pytest\n\n\n@pytest.fixture\ndef offset():\n    return 10\n',
      },
      workspace: {
        'tests/test_calc.py': TEST_CALC,
        'tests/test_fixture.py': withFixture,
        'tests/conftest.py': 'import pytest\n\n\n@pytest.fixture\ndef offset():\n    return 10\n',
        'tests/test_new.py': 'from calc import add\n\n\ndef test_new():\n    assert add(1, 1) == 2\n',
        'calc.py': CORRECT,
      },
      judged: ['tests/test_calc.py', 'tests/test_fixture.py'],
    });
    expect(outcomes(report)).toEqual([
      'tests/test_calc.py::test_add passed',
      'tests/test_calc.py::test_zero passed',
      'tests/test_fixture.py::test_fixture passed',
      'tests/test_new.py::test_new passed',
    ]);
    expect(report.outcome).toBe('completed');
  });

  test("a conftest.py the run rewrote is not loaded: the base commit's is", async () => {
    const withFixture = `def test_fixture(offset):
    from calc import add
    assert add(offset, 1) == 11
`;
    const report = await run({
      base: {
        'tests/test_fixture.py': withFixture,
        'tests/conftest.py': 'import pytest\n\n\n@pytest.fixture\ndef offset():\n    return 10\n',
      },
      workspace: {
        'tests/test_fixture.py': withFixture,
        'tests/conftest.py': `import pytest


@pytest.fixture
def offset():
    return 10


${FORGING_CONFTEST.replace('import pytest\n', '')}`,
        'calc.py': BROKEN,
      },
      judged: ['tests/test_fixture.py'],
    });
    expect(outcomes(report)).toEqual(['tests/test_fixture.py::test_fixture failed']);
  });

  test('a base test file the run deleted or replaced by a link is not judged: its tests are gone', async () => {
    const report = await run({
      base: { 'tests/test_calc.py': TEST_CALC, 'tests/test_other.py': TEST_CALC },
      workspace: {
        'tests/test_keep.py': 'def test_keep():\n    pass\n',
        'calc.py': BROKEN,
        'weak.py': 'def test_add():\n    pass\n',
      },
      judged: ['tests/test_calc.py', 'tests/test_other.py'],
      // A link to a weakened copy: the run's own pytest would collect its tests under the base name.
      prepare: (ws) => fs.symlinkSync('../weak.py', path.join(ws, 'tests', 'test_other.py')),
    });
    expect(outcomes(report)).toEqual(['tests/test_keep.py::test_keep passed']);
  });

  test("a test whose body the code under test kept from running is an error of that test, not a pass (it passed with the run's own pytest)", async () => {
    // Imported by the test file, the solution finds pytest's configuration up the stack and
    // registers a plugin that answers for every test function without calling it.
    const hijacking = `import sys

import pytest


def add(a, b):
    return a - b


class _Answer:
    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        return True


_frame = sys._getframe()
while _frame is not None:
    _config = next((getattr(v, "config", None) for v in list(_frame.f_locals.values()) if hasattr(v, "config")), None)
    if _config is not None and hasattr(_config, "pluginmanager"):
        _config.pluginmanager.register(_Answer(), "answer")
        break
    _frame = _frame.f_back
`;
    const setup: Setup = {
      base: { 'tests/test_calc.py': TEST_CALC },
      workspace: { 'tests/test_calc.py': TEST_CALC, 'calc.py': hijacking },
      judged: ['tests/test_calc.py'],
    };
    const forged = await run(setup, false);
    expect(outcomes(forged)).toEqual([
      'tests/test_calc.py::test_add passed',
      'tests/test_calc.py::test_zero passed',
    ]);
    const report = await run(setup);
    expect(report.outcome).toBe('completed');
    expect(outcomes(report)).toEqual([
      'tests/test_calc.py::test_add error',
      'tests/test_calc.py::test_zero error',
    ]);
    expect(report.cases[0]!.message).toMatch(/never ran/);
  });

  test('a src layout imports from the folders the command put on PYTHONPATH', async () => {
    const report = await run({
      base: { 'tests/test_calc.py': TEST_CALC },
      workspace: { 'tests/test_calc.py': TEST_CALC, 'src/calc.py': CORRECT },
      judged: ['tests/test_calc.py'],
      importPaths: ['src'],
    });
    expect(outcomes(report)).toEqual([
      'tests/test_calc.py::test_add passed',
      'tests/test_calc.py::test_zero passed',
    ]);
  });

  describe("helpers in the base commit's test folders are imported as it has them", () => {
    const TEST_CHECKED = `from tests.helpers import check_add


def test_add():
    check_add(2, 3, 5)


def test_zero():
    check_add(0, 0, 0)
`;
    const HELPERS = 'from calc import add\n\n\ndef check_add(a, b, total):\n    assert add(a, b) == total\n';
    const LENIENT = 'def check_add(a, b, total):\n    pass\n';
    const base = { 'tests/__init__.py': '', 'tests/helpers.py': HELPERS, 'tests/test_calc.py': TEST_CHECKED };
    const helpers = ['tests/__init__.py', 'tests/helpers.py'];
    const forgeries: [string, Record<string, string>][] = [
      ['rewritten', { 'tests/helpers.py': LENIENT }],
      ['shadowed by a package of the same name', { 'tests/helpers/__init__.py': LENIENT }],
      ['deleted and replaced by a package', { 'tests/helpers.py': '', 'tests/helpers/__init__.py': LENIENT }],
    ];
    test.each(forgeries)(
      'a helper %s does not make a broken add() pass (it did before)',
      async (_, change) => {
        const workspace: Record<string, string> = { ...base, ...change, 'calc.py': BROKEN };
        const setup: Setup = { base, workspace, judged: ['tests/test_calc.py'], helpers };
        const prepare = (ws: string): void => {
          if (change['tests/helpers.py'] === '') fs.rmSync(path.join(ws, 'tests', 'helpers.py'));
        };
        // Without the helpers known, the forgery passes the verdict: the hole this closes.
        const forged = await run({ ...setup, helpers: [], prepare });
        expect(outcomes(forged)).toEqual([
          'tests/test_calc.py::test_add passed',
          'tests/test_calc.py::test_zero passed',
        ]);
        const judged = await run({ ...setup, prepare });
        expect(outcomes(judged)).toEqual([
          'tests/test_calc.py::test_add failed',
          'tests/test_calc.py::test_zero passed',
        ]);
      },
    );

    test('an __init__.py the run adds to a test folder does not make a bare import find a helper of its own at the root', async () => {
      const bare = TEST_CHECKED.replace('from tests.helpers import', 'from helpers import');
      const flat = { 'tests/helpers.py': HELPERS, 'tests/test_calc.py': bare };
      const setup: Setup = {
        base: flat,
        workspace: { ...flat, 'tests/__init__.py': '', 'helpers.py': LENIENT, 'calc.py': BROKEN },
        judged: ['tests/test_calc.py'],
        helpers: ['tests/helpers.py'],
      };
      expect(outcomes(await run({ ...setup, helpers: [] }))).toContain('tests/test_calc.py::test_add passed');
      expect(outcomes(await run(setup))).toEqual([
        'tests/test_calc.py::test_add failed',
        'tests/test_calc.py::test_zero passed',
      ]);
      // Without the run's __init__.py, the bare import finds the base commit's helper as before.
      const honest = await run({
        ...setup,
        workspace: { ...flat, 'helpers.py': LENIENT, 'calc.py': CORRECT },
      });
      expect(outcomes(honest)).toEqual([
        'tests/test_calc.py::test_add passed',
        'tests/test_calc.py::test_zero passed',
      ]);
    });

    test("a module the code under test puts into sys.modules under a helper's name is not the helper", async () => {
      // The test imports calc first; calc plants a lenient tests.helpers before the test imports it.
      const calcFirst = `import calc  # noqa: F401\n${TEST_CHECKED}`;
      const planting = `import sys
import types

${BROKEN}

_fake = types.ModuleType("tests.helpers")
exec("def check_add(a, b, total):\\n    pass\\n", _fake.__dict__)
sys.modules["tests.helpers"] = _fake
`;
      const withCalcFirst = { ...base, 'tests/test_calc.py': calcFirst };
      const setup: Setup = {
        base: withCalcFirst,
        workspace: { ...withCalcFirst, 'calc.py': planting },
        judged: ['tests/test_calc.py'],
        helpers,
      };
      const forged = await run({ ...setup, helpers: [] });
      expect(outcomes(forged)).toEqual([
        'tests/test_calc.py::test_add passed',
        'tests/test_calc.py::test_zero passed',
      ]);
      const report = await run(setup);
      expect(outcomes(report)).toEqual([
        'tests/test_calc.py::test_add error',
        'tests/test_calc.py::test_zero error',
      ]);
      expect(report.cases[0]!.message).toMatch(/no longer referred to what their modules hold/);
      // The honest control: the same test file with a correct add() passes through the real helper.
      const honest = await run({ ...setup, workspace: { ...withCalcFirst, 'calc.py': CORRECT } });
      expect(outcomes(honest)).toEqual([
        'tests/test_calc.py::test_add passed',
        'tests/test_calc.py::test_zero passed',
      ]);
    });

    test('a package __init__.py the run rewrote to fix add() from the side does not run in the verdict', async () => {
      const setup: Setup = {
        base,
        workspace: {
          ...base,
          'tests/__init__.py': 'import calc\n\ncalc.add = lambda a, b: a + b\n',
          'calc.py': BROKEN,
        },
        judged: ['tests/test_calc.py'],
        helpers,
      };
      expect(outcomes(await run({ ...setup, helpers: [] }))).toContain('tests/test_calc.py::test_add passed');
      expect(outcomes(await run(setup))).toContain('tests/test_calc.py::test_add failed');
    });

    test('a correct add() passes through the trusted helper, and helpers read files beside them as before', async () => {
      const reading = `import os

from calc import add

EXPECTED = int(open(os.path.join(os.path.dirname(__file__), "expected.txt")).read())


def check_add(a, b, total):
    assert add(a, b) == total == EXPECTED or (a, b) != (2, 3)
`;
      const withData = { ...base, 'tests/helpers.py': reading };
      const report = await run({
        base: withData,
        workspace: { ...withData, 'tests/expected.txt': '5\n', 'calc.py': CORRECT },
        judged: ['tests/test_calc.py'],
        helpers,
      });
      expect(report.outcome).toBe('completed');
      expect(outcomes(report)).toEqual([
        'tests/test_calc.py::test_add passed',
        'tests/test_calc.py::test_zero passed',
      ]);
    });

    test('with helpers known, code listing the modules of a folder (pkgutil, as plugin discovery does) finds them as before', async () => {
      const listing = `import os
import pkgutil

from tests.helpers import check_add


def test_listing():
    check_add(2, 3, 5)
    names = sorted(m.name for m in pkgutil.iter_modules([os.path.dirname(os.path.dirname(__file__))]))
    assert "calc" in names and "tests" in names
`;
      const withListing = { ...base, 'tests/test_listing.py': listing };
      const report = await run({
        base: withListing,
        workspace: { ...withListing, 'calc.py': CORRECT },
        judged: ['tests/test_calc.py', 'tests/test_listing.py'],
        helpers,
      });
      expect(outcomes(report)).toEqual([
        'tests/test_calc.py::test_add passed',
        'tests/test_calc.py::test_zero passed',
        'tests/test_listing.py::test_listing passed',
      ]);
    });

    test("the base commit's helpers are found in its tree: only Python files of test folders, never its tests or conftest.py", async () => {
      const repo = makeWorkspace({
        ...base,
        'tests/conftest.py': '',
        'tests/data/sample.json': '{}',
        'test/support/__init__.py': '',
        'calc.py': BROKEN,
        'pkg/util.py': '',
      });
      const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t' };
      const env = { ...gitEnv, GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
      for (const args of [
        ['init', '-q'],
        ['add', '.'],
        ['commit', '-qm', 'base'],
      ])
        execFileSync('git', args, { cwd: repo, env });
      const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
      const trusted = await prepareTrustedTests({
        language: 'python',
        commonDir: path.join(repo, '.git'),
        baseCommit: commit,
        hasAcceptance: false,
      });
      try {
        expect(trusted.baseTests?.files).toEqual(['tests/test_calc.py']);
        expect(trusted.baseTests?.helpers?.sort()).toEqual([
          'test/support/__init__.py',
          'tests/__init__.py',
          'tests/helpers.py',
        ]);
        const workspace = makeWorkspace({ ...base, 'tests/helpers.py': LENIENT, 'calc.py': BROKEN });
        const report = await runTestSuite({
          workspace,
          language: 'python',
          mode: 'bwrap',
          baseTests: trusted.baseTests!,
        });
        expect(outcomes(report)).toEqual([
          'tests/test_calc.py::test_add failed',
          'tests/test_calc.py::test_zero passed',
        ]);
      } finally {
        trusted.dispose();
      }
    });
  });
});
