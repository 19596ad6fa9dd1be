/**
 * The pytest verdict: acceptance tests run in a process of their own that nothing written during
 * the run configures, watched by an audit hook the code under test cannot remove. Each forgery
 * below kept add() broken (`a - b`) with the user's acceptance tests in place and made aca's runner
 * report a pass; none may. The control suite shows that legitimate acceptance files (skips,
 * expected failures, parametrize, fixtures, classes, unittest) give honest verdicts both ways.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTestSuite } from '../../src/sandbox';
import type { SandboxMode, TestRunReport } from '../../src/shared/types';
import { judgeAgainstBaseline } from '../../src/activities/baseline-verdict';
import { writeBaseTestConfig } from '../../src/repo';
import { makeWorkspace, removeWorkspaces } from '../helpers/workspace-fixture';

afterAll(removeWorkspaces);

let lastWorkspaceSeen = '';

const ACCEPTANCE = `from solution import add


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-1, -1) == -2
`;
const BROKEN = 'def add(a, b):\n    return a - b\n';
const CORRECT = 'def add(a, b):\n    return a + b\n';
const TABLE = '_TABLE = {(2, 3): 5, (-1, -1): -2}\n';

/** What the workflow calls success for a run with acceptance tests and no baseline. */
const succeeded = (r: TestRunReport): boolean =>
  judgeAgainstBaseline(r, null, ['tests/test_add.py', 'tests/test_forms.py']).success;

async function run(
  files: Record<string, string>,
  acceptance: Record<string, string> = { 'tests/test_add.py': ACCEPTANCE },
  mode: SandboxMode = 'bwrap',
  prepare: (ws: string) => void = () => undefined,
): Promise<TestRunReport> {
  const sourceDir = makeWorkspace(acceptance);
  const ws = makeWorkspace({ ...acceptance, ...files });
  prepare(ws);
  for (const file of Object.keys(acceptance)) fs.chmodSync(path.join(ws, file), 0o444);
  const report = await runTestSuite({
    workspace: ws,
    language: 'python',
    mode,
    acceptance: { sourceDir, files: Object.keys(acceptance) },
  });
  for (const [file, text] of Object.entries(acceptance))
    expect(fs.readFileSync(path.join(ws, file), 'utf8')).toBe(text);
  return report;
}

/** Failed on its merits in the verdict process, or caught tampering: never a pass. */
function expectNoPass(report: TestRunReport): void {
  expect(succeeded(report)).toBe(false);
  const acceptancePassed = report.cases.filter(
    (c) => c.name.startsWith('tests/test_add.py::') && c.status === 'passed',
  );
  expect(acceptancePassed).toEqual([]);
}

describe('the seven forgeries', () => {
  const FORGERIES: Record<string, Record<string, string>> = {
    '1: node ids renamed with a [::x] suffix and runtest made a no-op': {
      'solution.py': BROKEN,
      'conftest.py': `
def pytest_collection_modifyitems(config, items):
    for item in items:
        item._nodeid = item.nodeid + "[::x]"
        item.runtest = lambda: None
`,
    },
    "2: a pytest_pyfunc_call that runs the test's code under globals where add is a table": {
      'solution.py': BROKEN,
      'conftest.py': `
import types
import pytest
${TABLE}
@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    fn = pyfuncitem.obj
    scope = dict(fn.__globals__)
    scope["add"] = lambda a, b: _TABLE[(a, b)]
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy(**{name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames})
    return True
`,
    },
    "3: aca's plugin reached through config.pluginmanager, its hooks' closure cells replaced": {
      'solution.py': BROKEN,
      'conftest.py': `
import pytest

def pytest_configure(config):
    plugin = config.pluginmanager.get_plugin("aca_results")
    if plugin is None:
        return
    for fn in (plugin.pytest_runtest_call, plugin.pytest_runtest_logreport, plugin.pytest_runtest_makereport):
        fn = getattr(fn, "__wrapped__", fn)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            if var == "candidates":
                cell.cell_contents = lambda nodeid: None
            elif var == "raised":
                cell.cell_contents = lambda call: "passed"

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
`,
    },
    "4: gc.get_objects() finds the plugin's inner functions and swaps their __code__": {
      'solution.py': BROKEN,
      'conftest.py': `
import gc
import pytest

def _no_candidates(expected):
    def candidates(nodeid):
        expected
        return None
    return candidates.__code__

def _passed(skip_exception, xfail_exception):
    def raised(call):
        skip_exception, xfail_exception
        return "passed"
    return raised.__code__

def pytest_configure(config):
    for obj in gc.get_objects():
        if type(obj).__name__ != "function" or getattr(obj, "__module__", "") != "aca_results":
            continue
        if obj.__name__ == "candidates":
            obj.__code__ = _no_candidates(None)
        elif obj.__name__ == "raised":
            obj.__code__ = _passed(None, None)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
`,
    },
    '5: the results channel found in /proc/self/fd, pass records and a report written, os._exit(0)': {
      'solution.py': BROKEN,
      'conftest.py': `
import os

RECORDS = []
for test in ("tests/test_add.py::test_add", "tests/test_add.py::test_add_negative"):
    for when in ("setup", "call", "teardown"):
        RECORDS.append('{"t":"case","id":"%s","when":"%s","outcome":"passed","raw":"passed","body":"%s","xfail":false}'
                       % (test, when, "ran" if when == "call" else "unknown"))
RECORDS.append('{"t":"done","exit":0}')
XML = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2">'
       '<testcase classname="tests.test_add" name="test_add" time="0.001"/>'
       '<testcase classname="tests.test_add" name="test_add_negative" time="0.001"/></testsuite></testsuites>')

def pytest_configure(config):
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            continue
        # Node gives the test process its pipes as sockets.
        if fd > 2 and target.startswith(("pipe:", "socket:")):
            try:
                os.write(fd, ("\\n".join(RECORDS) + "\\n").encode())
            except OSError:
                pass
    if config.option.xmlpath:
        with open(config.option.xmlpath, "w") as f:
            f.write(XML)
    os._exit(0)
`,
    },
    "6: a sys.settrace tracer rewriting add's arguments through PyFrame_LocalsToFast": {
      'solution.py': BROKEN,
      'conftest.py': `
import ctypes
import sys
import threading

def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "add" and frame.f_code.co_filename.endswith("solution.py"):
        frame.f_locals["b"] = -frame.f_locals["b"]
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return None

sys.settrace(_tracer)
threading.settrace(_tracer)
`,
    },
    '7: a sys.meta_path finder in the solution loads the acceptance module and rebinds its add': {
      'test_trivial.py': 'from solution import add\n\n\ndef test_trivial():\n    assert add(0, 0) == 0\n',
      'solution.py': `${BROKEN}
import sys
${TABLE}

class _Loader:
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        module.add = lambda a, b: _TABLE[(a, b)]


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[-1] != "test_add":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


sys.meta_path.insert(0, _Finder())
`,
    },
  };

  test.each(Object.keys(FORGERIES))('%s', async (name) => {
    const report = await run(FORGERIES[name]);
    expectNoPass(report);
    // The verdict process loads none of it: the acceptance tests ran and failed on their merits.
    const statuses = Object.fromEntries(report.cases.map((c) => [c.name, c.status]));
    expect(statuses).toMatchObject({
      'tests/test_add.py::test_add': 'failed',
      'tests/test_add.py::test_add_negative': 'failed',
    });
  });
});

describe('the same reach from the solution module, in the verdict process', () => {
  // The solution is imported by the acceptance tests themselves, so it runs in the verdict
  // process: there the audit hook sees what it does.
  const FROM_SOLUTION: Record<string, [string, RegExp]> = {
    'a walk of the object graph (gc.get_objects)': [
      'import gc\n_seen = len(gc.get_objects())\n',
      /gc\.get_objects/,
    ],
    'the channel hunted in /proc/self/fd and written to': [
      `import os
for _name in os.listdir("/proc/self/fd"):
    try:
        os.write(int(_name), b'{"t":"done","exit":0,"tampered":0,"n":0}\\tforged\\n')
    except OSError:
        pass
`,
      /os\.listdir of \/proc\/self\/fd/,
    ],
    "a trace function that rewrites add's arguments through ctypes": [
      `import ctypes, sys

def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "add" and frame.f_code.co_filename.endswith("solution.py"):
        frame.f_locals["b"] = -frame.f_locals["b"]
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return None

sys.settrace(_tracer)
`,
      /sys\.settrace by the code under test/,
    ],
    'a code swap on a function': [
      '_swapped = lambda: None\n_swapped.__code__ = (lambda: 1).__code__\n',
      /code was replaced/,
    ],
    "a plugin registered from the solution (found by walking pytest's frames) that rebinds the test module's add":
      [
        `import sys
${TABLE}
_frame = sys._getframe(1)
_config = None
while _frame is not None and _config is None:
    for _value in list(_frame.f_locals.values()):
        _candidate = getattr(_value, "config", None)
        if _candidate is not None and hasattr(_candidate, "pluginmanager"):
            _config = _candidate
            break
    _frame = _frame.f_back

class _Forger:
    @staticmethod
    def pytest_runtest_setup(item):
        item.module.add = lambda a, b: _TABLE[(a, b)]

if _config is not None:
    _config.pluginmanager.register(_Forger(), "forger")
`,
        /no longer referred to what their modules hold/,
      ],
    'a skip raised from inside add()': [
      'import pytest\n\ndef add(a, b):\n    pytest.skip("not today")\n',
      /skipped by code outside the acceptance tests/,
    ],
  };

  test.each(Object.keys(FROM_SOLUTION))('%s', async (name) => {
    const [code, message] = FROM_SOLUTION[name];
    const report = await run({ 'solution.py': `${BROKEN}\n${code}` });
    expectNoPass(report);
    expect(report.outcome).toBe('tampered');
    expect(report.message).toMatch(message);
  });
});

describe('legitimate acceptance files give honest verdicts', () => {
  const FORMS = `import functools
import sys
import unittest

import pytest

from solution import add


@pytest.fixture
def two():
    return 2


def test_fixture(two):
    assert add(two, 3) == 5


@pytest.mark.parametrize("a,b,total", [(1, 2, 3), (-1, -1, -2)])
def test_parametrized(a, b, total):
    assert add(a, b) == total


@pytest.mark.skip(reason="not written yet")
def test_skipped():
    assert add(1, 1) == 3


@pytest.mark.skipif(sys.version_info > (2, 0), reason="only on Python 2")
def test_skipif():
    assert add(1, 1) == 3


@pytest.mark.xfail(reason="known", strict=True)
def test_xfail_strict():
    assert add(1, 1) == 3


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert add(1, 1) == 3


def test_runtime_skip():
    if add(0, 0) == 0:
        pytest.skip("skipped at run time")
    assert False


class TestClass:
    def test_method(self, two):
        assert add(two, 2) == 4


class AddCase(unittest.TestCase):
    def test_unittest(self):
        self.assertEqual(add(10, 1), 11)

    @unittest.skip("later")
    def test_unittest_skipped(self):
        self.fail()
`;

  test.each(['bwrap', 'none'] as const)('a correct solution succeeds (%s)', async (mode) => {
    const report = await run({ 'solution.py': CORRECT }, { 'tests/test_forms.py': FORMS }, mode);
    expect(report.message ?? '').not.toMatch(/tamper/);
    expect(report.outcome).toBe('completed');
    const statuses = Object.fromEntries(
      report.cases.map((c) => [c.name.replace('tests/test_forms.py::', ''), c.status]),
    );
    expect(statuses).toEqual({
      test_fixture: 'passed',
      'test_parametrized[1-2-3]': 'passed',
      'test_parametrized[-1--1--2]': 'passed',
      test_skipped: 'skipped',
      test_skipif: 'skipped',
      test_xfail_strict: 'skipped',
      test_xfail: 'skipped',
      test_runtime_skip: 'skipped',
      'TestClass::test_method': 'passed',
      'AddCase::test_unittest': 'passed',
      'AddCase::test_unittest_skipped': 'skipped',
    });
    expect(succeeded(report)).toBe(true);
  });

  test('a wrong solution fails on its merits, not as tampering', async () => {
    const report = await run({ 'solution.py': BROKEN }, { 'tests/test_forms.py': FORMS });
    expect(report.outcome).toBe('completed');
    expect(succeeded(report)).toBe(false);
    const failed = report.cases.filter((c) => c.status === 'failed').map((c) => c.name);
    expect(failed).toEqual(
      expect.arrayContaining([
        'tests/test_forms.py::test_fixture',
        'tests/test_forms.py::test_parametrized[1-2-3]',
        'tests/test_forms.py::TestClass::test_method',
        'tests/test_forms.py::AddCase::test_unittest',
      ]),
    );
  });

  test("the run's own tests run beside the verdict and are counted with it", async () => {
    const report = await run({
      'solution.py': CORRECT,
      'tests/test_extra.py': 'from solution import add\n\n\ndef test_extra():\n    assert add(1, 1) == 2\n',
    });
    expect(report.outcome).toBe('completed');
    expect(report.cases.map((c) => `${c.name} ${c.status}`).sort()).toEqual([
      'tests/test_add.py::test_add passed',
      'tests/test_add.py::test_add_negative passed',
      'tests/test_extra.py::test_extra passed',
    ]);
    expect(succeeded(report)).toBe(true);
  });
});

test('a planted .pyc of a correct add does not stand in for the broken solution.py', async () => {
  const dir = makeWorkspace({ 'solution.py': CORRECT });
  const pyc = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import importlib.util, py_compile, sys; print(py_compile.compile("solution.py", cfile=importlib.util.cache_from_source("solution.py"), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH))',
    ],
    { cwd: dir, encoding: 'utf8' },
  ).trim();
  const relative = path.relative(dir, path.resolve(dir, pyc));
  const report = await run({ 'solution.py': BROKEN }, undefined, 'bwrap', (ws) => {
    fs.mkdirSync(path.dirname(path.join(ws, relative)), { recursive: true });
    fs.copyFileSync(path.join(dir, relative), path.join(ws, relative));
  });
  expectNoPass(report);
  expect(report.cases.filter((c) => c.status === 'failed')).toHaveLength(2);
});

test("a key of the code under test's own in the test module's globals never runs inside the audit hook", async () => {
  // A str subclass hashing like "add", planted in the importing acceptance module: a hook that
  // looked names up in that dict would call its __eq__, and from there reach the hook's frame.
  const report = await run(
    {
      'solution.py': `${CORRECT}
import os, sys

class _Key(str):
    def __hash__(self):
        return hash("add")

    def __eq__(self, other):
        caller = sys._getframe(1)
        names = []
        while caller is not None:
            names.append(caller.f_code.co_name)
            caller = caller.f_back
        if "hook" in names:
            with open(os.path.join(os.path.dirname(__file__), "reached-the-hook"), "w") as f:
                f.write(" ".join(names))
        return str.__eq__(self, other)

    __ne__ = lambda self, other: not self.__eq__(other)

_frame = sys._getframe(1)
while _frame is not None and not _frame.f_globals.get("__name__", "").endswith("test_add"):
    _frame = _frame.f_back
_frame.f_globals[_Key("add")] = None
`,
    },
    undefined,
    'bwrap',
    (ws) => {
      lastWorkspaceSeen = ws;
    },
  );
  expect(fs.existsSync(path.join(lastWorkspaceSeen, 'reached-the-hook'))).toBe(false);
  // The key took the place of the name "add" in the module's dict: a name held by anything but a
  // string is not what the module imported.
  expect(report.outcome).toBe('tampered');
  expect(report.message).toMatch(/no longer referred to what their modules hold/);
});

describe("in a run on a repository, the verdict loads the base commit's configuration", () => {
  const BASE_CONFTEST = 'import pytest\n\n\n@pytest.fixture\ndef three():\n    return 3\n';
  const ACCEPT = 'from solution import add\n\n\ndef test_fixture(three):\n    assert add(three, 2) == 5\n';
  // The run rewrote the repository's conftest.py: same path, a forger's body.
  const RUN_CONFTEST = `import pytest


@pytest.fixture
def three():
    return 3


def pytest_collection_modifyitems(config, items):
    for item in items:
        item._nodeid = item.nodeid + "[::x]"
        item.runtest = lambda: None
`;

  async function repoRun(solution: string): Promise<TestRunReport> {
    const repo = makeWorkspace({
      'conftest.py': BASE_CONFTEST,
      'pytest.ini': '[pytest]\naddopts = -k nothing_at_all\nmarkers =\n    slow: slow tests\n',
      'tests/test_repo.py': ACCEPT,
    });
    const gitEnv = {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    };
    for (const args of [
      ['init', '-q'],
      ['add', '.'],
      ['commit', '-qm', 'base'],
    ])
      execFileSync('git', args, { cwd: repo, env: gitEnv });
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    const folder = makeWorkspace({});
    const baseConfig = await writeBaseTestConfig({ gitDir: path.join(repo, '.git') }, commit, folder, [
      'tests/test_repo.py',
    ]);
    expect(baseConfig.files.sort()).toEqual(['conftest.py', 'pytest.ini']);
    const sourceDir = makeWorkspace({ 'tests/test_repo.py': ACCEPT });
    const ws = makeWorkspace({
      'conftest.py': RUN_CONFTEST,
      'pytest.ini': '[pytest]\naddopts = -k nothing_at_all\n',
      'tests/test_repo.py': ACCEPT,
      'solution.py': solution,
    });
    return runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      acceptance: { sourceDir, files: ['tests/test_repo.py'], baseConfig },
    });
  }

  test("a correct solution passes with the base commit's fixture", async () => {
    const report = await repoRun(CORRECT);
    expect(report.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
      'tests/test_repo.py::test_fixture passed',
    ]);
    expect(judgeAgainstBaseline(report, null, ['tests/test_repo.py']).success).toBe(true);
  });

  test("a broken one fails: the run's rewritten conftest.py is not what the verdict loads", async () => {
    const report = await repoRun(BROKEN);
    expect(report.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
      'tests/test_repo.py::test_fixture failed',
    ]);
  });
});
