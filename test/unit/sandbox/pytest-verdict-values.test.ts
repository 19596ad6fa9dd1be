/**
 * The pytest verdict's hold on the values and names an acceptance test works with. Each forgery
 * below keeps add() broken (`a - b`), is written in the solution module (which the acceptance test
 * imports, so it runs in the verdict process) and made aca report a pass before the verdict looked
 * at values, builtins and the test frame's globals; none may now. The audit hook's other refusals
 * each get a case of their own, and the controls show honest acceptance files still pass.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTestSuite } from '../../../src/sandbox';
import type { TestRunReport } from '../../../src/shared/types';
import { judgeAgainstBaseline } from '../../../src/activities/baseline-verdict';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';

afterAll(removeWorkspaces);

const ACCEPTANCE = `from solution import add


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-1, -1) == -2
`;
const BROKEN = 'def add(a, b):\n    return a - b\n';
const CORRECT = 'def add(a, b):\n    return a + b\n';
const TABLE = '_TABLE = {(2, 3): 5, (-1, -1): -2}\n';

/** Finds the acceptance module's globals from the solution's import, which that module runs. */
const TEST_GLOBALS = `import sys as _sys

def _test_globals():
    frame = _sys._getframe(1)
    while frame is not None and not frame.f_globals.get("__name__", "").endswith("test_add"):
        frame = frame.f_back
    return frame.f_globals
`;

/** Finds pytest's config by walking the frames above the solution's import. */
const FIND_CONFIG = `import sys as _sys

def _config():
    frame = _sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            candidate = getattr(value, "config", None)
            if candidate is not None and hasattr(candidate, "pluginmanager"):
                return candidate
        frame = frame.f_back
    return None
`;

/** A report hook, registered through pytest's config, that clears what the call phase raised. */
const CLEAR_EXCINFO = `${FIND_CONFIG}
import pytest as _pytest

class _Clear:
    @staticmethod
    @_pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(item, call):
        call.excinfo = None
        yield

_found = _config()
if _found is not None:
    _found.pluginmanager.register(_Clear(), "clear")
`;

async function run(
  solution: string,
  acceptance: Record<string, string> = { 'tests/test_add.py': ACCEPTANCE },
  extra: Record<string, string> = {},
): Promise<TestRunReport> {
  const sourceDir = makeWorkspace(acceptance);
  const ws = makeWorkspace({ ...acceptance, ...extra, 'solution.py': solution });
  for (const file of Object.keys(acceptance)) fs.chmodSync(path.join(ws, file), 0o444);
  return runTestSuite({
    workspace: ws,
    language: 'python',
    mode: 'bwrap',
    acceptance: { sourceDir, files: Object.keys(acceptance) },
  });
}

function expectRefused(report: TestRunReport, message: RegExp, files = ['tests/test_add.py']): void {
  expect(judgeAgainstBaseline(report, null, files).success).toBe(false);
  expect(report.cases.filter((c) => c.status === 'passed').map((c) => c.name)).toEqual([]);
  expect(report.outcome).toBe('tampered');
  expect(report.message).toMatch(message);
}

const TYPED = `from solution import add


def test_add():
    result = add(2, 3)
    assert type(result) is int
    assert isinstance(result, int)
    assert result == 5
`;

const SUMMED = `from solution import add


def test_add():
    assert sum([add(1, 1), add(2, 2)]) == 6
`;

describe('the forgeries of issue 41, from the solution module', () => {
  test.each([
    ['plain', ACCEPTANCE],
    ['typed', TYPED],
    ['summed', SUMMED],
  ])('their acceptance file (%s) passes with a correct add', async (_name, text) => {
    const report = await run(CORRECT, { 'tests/test_add.py': text });
    expect(report.message ?? '').not.toMatch(/tamper/);
    expect(report.outcome).toBe('completed');
    expect(judgeAgainstBaseline(report, null, ['tests/test_add.py']).success).toBe(true);
  });

  test('add returns an object that equals everything', async () => {
    const report = await run(`class _Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def add(a, b):
    return _Anything()
`);
    expectRefused(report, /comparison in the acceptance tests ran the code under test's _Anything\.__eq__/);
  });

  test("the solution writes its own isinstance and type into the test module's globals", async () => {
    const report = await run(
      `${TEST_GLOBALS}
class _Anything:
    def __eq__(self, other):
        return True


def add(a, b):
    return _Anything()


_scope = _test_globals()
_scope["type"] = lambda value: int
_scope["isinstance"] = lambda value, kind: True
`,
      { 'tests/test_add.py': TYPED },
    );
    expectRefused(
      report,
      /reads isinstance, which is not the real builtin|reads type, which is not the real builtin/,
    );
  });

  test("a shadowed builtin alone: the test module's sum answers 6", async () => {
    const report = await run(
      `${TEST_GLOBALS}${BROKEN}
_test_globals()["sum"] = lambda values: 6
`,
      { 'tests/test_add.py': SUMMED },
    );
    expectRefused(report, /reads sum, which is not the real builtin/);
  });

  test("the test's own code run again under stand-in globals, its modules gone, a report hook through item.config", async () => {
    const report = await run(`import sys
import types
${TABLE}${CLEAR_EXCINFO}

def add(a, b):
    frame = sys._getframe(1)
    if frame.f_code.co_name.startswith("test_") and not getattr(add, "busy", False):
        scope = dict(frame.f_globals)
        scope["add"] = lambda a, b: _TABLE[(a, b)]
        saved = sys.modules.pop("solution")
        add.busy = True
        try:
            types.FunctionType(frame.f_code, scope)()
        finally:
            add.busy = False
            sys.modules["solution"] = saved
    return a - b
`);
    expectRefused(report, /a function was built around the acceptance tests' code/);
  });
});

describe("each of the audit hook's refusals", () => {
  const CASES: Record<string, [string, RegExp]> = {
    'opening /proc/self/mem': ['open("/proc/self/mem", "rb").close()\n', /open of \/proc\/self\/mem/],
    'listing /proc/self/fdinfo': [
      'import os\nos.listdir("/proc/self/fdinfo")\n',
      /listdir of \/proc\/self\/fdinfo/,
    ],
    'opening /proc/self/environ': [
      'open("/proc/self/environ", "rb").close()\n',
      /open of \/proc\/self\/environ/,
    ],
    'listing /proc/self/map_files': [
      'import os\ntry:\n    os.listdir("/proc/self/map_files")\nexcept OSError:\n    pass\n',
      /listdir of \/proc\/self\/map_files/,
    ],
    "opening /proc/self/task/<tid>/environ (the thread's own)": [
      'import threading\nopen("/proc/self/task/%d/environ" % threading.get_native_id(), "rb").close()\n',
      /open of \/proc\/self\/task\/\d+\/environ/,
    ],
    'by another spelling: /proc/./thread-self/../self/mem': [
      'open("/proc/./thread-self/../self/mem", "rb").close()\n',
      /open of \/proc\/\.\/thread-self\/\.\.\/self\/mem/,
    ],
    "a function built around a test's code (types.FunctionType)": [
      `import sys, types

def add(a, b):
    frame = sys._getframe(1)
    types.FunctionType(frame.f_code, frame.f_globals)
    return a - b
`,
      /a function was built around the acceptance tests' code/,
    ],
    "a test's code run under globals that are not its module's (exec of its code object)": [
      `import sys
${TABLE}${CLEAR_EXCINFO}

def add(a, b):
    frame = sys._getframe(1)
    if frame.f_code.co_name.startswith("test_") and not getattr(add, "busy", False):
        scope = dict(frame.f_globals)
        add.busy = True
        try:
            exec(frame.f_code, scope)
        finally:
            add.busy = False
    return a - b
`,
      /ran under globals that are not its module's/,
    ],
    "a module the test file imports missing from sys.modules while the test's names are swapped": [
      `${FIND_CONFIG}
import sys
${TABLE}

class _Forger:
    @staticmethod
    def pytest_runtest_setup(item):
        sys.modules.pop("solution", None)
        item.module.add = lambda a, b: _TABLE[(a, b)]

_found = _config()
if _found is not None:
    _found.pluginmanager.register(_Forger(), "forger")
`,
      /no longer referred to what their modules hold/,
    ],
  };

  test.each(Object.keys(CASES))('%s', async (name) => {
    const [code, message] = CASES[name];
    const report = await run(`${BROKEN}\n${code}`);
    expectRefused(report, message);
  });
});

describe('honest acceptance files still pass, and fail on their merits', () => {
  const SOLUTION = `import dataclasses
import enum
import functools
import typing


def add(a, b):
    return a + b


@dataclasses.dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Box:
    items: list
    label: str = "box"


def make_point(x, y):
    return Point(x, y)


def make_box(*items):
    return Box(list(items))


class Pair(typing.NamedTuple):
    left: int
    right: int


def pair(a, b):
    return Pair(a, b)


class Color(enum.Enum):
    RED = 1
    GREEN = 2


def shades():
    return [Color.RED, Color.GREEN]


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("no division by zero")
    return a / b


def stats(values):
    return {"min": min(values), "max": max(values), "distinct": set(values), "sorted": tuple(sorted(values))}


@functools.total_ordering
class _Version:
    # Compared by the solution itself, never handed to the tests.
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n

    def __lt__(self, other):
        return self.n < other.n

    __hash__ = object.__hash__


def newest(numbers):
    return max(_Version(n) for n in numbers).n


def squares(n):
    for i in range(n):
        yield i * i
`;
  const CONFTEST = 'import pytest\n\n\n@pytest.fixture\ndef three():\n    return 3\n';
  const TESTS = `import dataclasses
import sys
from unittest import mock

import pytest

from solution import Box, Color, Pair, Point, add, divide, make_box, make_point, newest, pair, shades, squares, stats


@dataclasses.dataclass
class Expected:
    value: int


def test_fixture_from_conftest(three):
    assert add(three, 2) == 5


@pytest.mark.parametrize("a,b,total", [(1, 2, 3), (-1, -1, -2)])
def test_parametrized(a, b, total):
    assert add(a, b) == total


@pytest.mark.skip(reason="not written yet")
def test_skipped():
    assert add(1, 1) == 3


@pytest.mark.skipif(sys.version_info > (2, 0), reason="only on Python 2")
def test_skipif():
    assert add(1, 1) == 3


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert add(1, 1) == 3


class TestClass:
    def test_method(self, three):
        assert add(three, 1) == 4

    def test_dataclasses_by_value(self):
        assert make_point(1, 2) == Point(1, 2)
        assert make_point(1, 2) != Point(2, 1)
        assert make_point(1, 2) < Point(1, 3)
        assert make_point(1, 2) in {Point(1, 2)}
        assert make_box(1, 2) == Box([1, 2])
        assert Expected(add(1, 1)) == Expected(2)


def test_namedtuple_and_enum():
    assert pair(1, 2) == Pair(1, 2) == (1, 2)
    assert shades() == [Color.RED, Color.GREEN]
    assert Color.RED in set(shades())


def test_builtins():
    result = add(2, 3)
    assert isinstance(result, int) and type(result) is int
    assert len([result]) == 1 and sorted([result, 1]) == [1, 5] and sum([result]) == 5
    assert max(result, 1) == 5 and abs(-result) == 5 and repr(result) == "5"


def test_approx_and_raises():
    assert divide(1, 3) == pytest.approx(0.3333, rel=1e-3)
    assert [divide(1, 4)] == pytest.approx([0.25])
    with pytest.raises(ZeroDivisionError, match="no division"):
        divide(1, 0)


def test_plain_containers():
    assert stats([3, 1, 2]) == {"min": 1, "max": 3, "distinct": {1, 2, 3}, "sorted": (1, 2, 3)}
    assert 4 in squares(3)
    assert list(squares(3)) == [0, 1, 4]


def test_the_solution_compares_its_own_objects():
    assert newest([3, 9, 4]) == 9


def test_mocks_and_any_of_the_tests_own():
    recorder = mock.Mock()
    recorder(add(1, 1))
    recorder.assert_called_once_with(mock.ANY)
    assert [add(1, 1), 5] == [2, mock.ANY]
    assert mock.call(add(1, 1)) == mock.call(2)
`;
  const EXPECTED = {
    test_fixture_from_conftest: 'passed',
    'test_parametrized[1-2-3]': 'passed',
    'test_parametrized[-1--1--2]': 'passed',
    test_skipped: 'skipped',
    test_skipif: 'skipped',
    test_xfail: 'skipped',
    'TestClass::test_method': 'passed',
    'TestClass::test_dataclasses_by_value': 'passed',
    test_namedtuple_and_enum: 'passed',
    test_builtins: 'passed',
    test_approx_and_raises: 'passed',
    test_plain_containers: 'passed',
    test_the_solution_compares_its_own_objects: 'passed',
    test_mocks_and_any_of_the_tests_own: 'passed',
  };
  const files = { 'tests/test_forms.py': TESTS, 'tests/conftest.py': CONFTEST };

  test('a correct solution succeeds', async () => {
    const report = await run(SOLUTION, files);
    expect(report.message ?? '').not.toMatch(/tamper/);
    expect(report.outcome).toBe('completed');
    const statuses = Object.fromEntries(
      report.cases.map((c) => [c.name.replace('tests/test_forms.py::', ''), c.status]),
    );
    expect(statuses).toEqual(EXPECTED);
    expect(judgeAgainstBaseline(report, null, ['tests/test_forms.py']).success).toBe(true);
  });

  test('a broken add fails on its merits, not as tampering', async () => {
    const report = await run(SOLUTION.replace('return a + b', 'return a - b'), files);
    expect(report.outcome).toBe('completed');
    const failed = report.cases.filter((c) => c.status === 'failed').map((c) => c.name);
    expect(failed.sort()).toEqual([
      'tests/test_forms.py::TestClass::test_dataclasses_by_value',
      'tests/test_forms.py::TestClass::test_method',
      'tests/test_forms.py::test_builtins',
      'tests/test_forms.py::test_fixture_from_conftest',
      'tests/test_forms.py::test_mocks_and_any_of_the_tests_own',
      'tests/test_forms.py::test_parametrized[-1--1--2]',
      'tests/test_forms.py::test_parametrized[1-2-3]',
    ]);
  });
});

describe('routes an attacker who had not seen the cases above would try', () => {
  const ORDERED = `from solution import add


def test_add():
    assert add(2, 3) <= 5 and add(2, 3) >= 5


def test_add_negative():
    assert add(-1, -1) <= -2 and add(-1, -1) >= -2
`;
  const LISTED = `from solution import add


def test_add():
    assert [add(2, 3), add(-1, -1)] == [5, -2]
`;
  const CASES: Record<string, [string, RegExp, Record<string, string>?]> = {
    'a class whose __eq__ is a builtin (bool), so no frame of its runs': [
      `class _Liar:
    __eq__ = bool
    __ne__ = lambda self, other: False


def add(a, b):
    return _Liar()
`,
      /_Liar\.__eq__ is a type, not a function/,
    ],
    'add itself a subclass of complex whose __eq__ is bool: built by a C constructor, no function returns it':
      ['class add(complex):\n    __eq__ = bool\n', /a class the tests import: add\.__eq__ is a type/],
    'an int subclass whose __eq__ is always true': [
      `class _Five(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return _Five(a - b)
`,
      /ran the code under test's _Five\.__eq__/,
    ],
    'objects that equal everything, in a list the test compares': [
      `class _Any:
    def __eq__(self, other):
        return True


def add(a, b):
    return _Any()
`,
      /ran the code under test's _Any\.__eq__/,
      { 'tests/test_add.py': LISTED },
    ],
    'an object whose class is swapped (__class__ assignment) for one that compares through bool': [
      `class _Plain:
    pass


class _Liar:
    __eq__ = bool


def add(a, b):
    value = _Plain()
    value.__class__ = _Liar
    return value
`,
      /class was changed to one whose _Liar\.__eq__ is a type/,
    ],
    'functools.total_ordering over an __lt__ and __eq__ of its own': [
      `import functools


@functools.total_ordering
class _Loose:
    def __eq__(self, other):
        return True

    def __lt__(self, other):
        return False

    __hash__ = object.__hash__


def add(a, b):
    return _Loose()
`,
      /ran the code under test's _Loose\.__(eq|lt)__/,
      { 'tests/test_add.py': ORDERED },
    ],
    'a "data class" whose __eq__ was written by hand to look generated': [
      `import dataclasses


@dataclasses.dataclass(eq=False)
class _Fake:
    value: int

    def __eq__(self, other):
        return True


def add(a, b):
    return _Fake(a - b)
`,
      /ran the code under test's _Fake\.__eq__/,
    ],
    "a data class whose generated __eq__ reads a NotImplemented of the solution's (True)": [
      `import dataclasses

NotImplemented = True


@dataclasses.dataclass
class _Point:
    value: int


def add(a, b):
    return _Point(a - b)
`,
      /ran the code under test's .*__eq__/,
    ],
    'the builtins module patched before the test runs': [
      `${BROKEN}
import builtins

_real_sum = builtins.sum


def _sum(values, *rest):
    return 6 if values == [2, 4] or values == [0, 0] else _real_sum(values, *rest)


builtins.sum = _sum
`,
      /reads sum, which is not the real builtin/,
      { 'tests/test_add.py': SUMMED },
    ],
    "sys.modules replaced by a dict subclass that shows a stand-in solution, the test module's add rebound": [
      `${BROKEN}
${FIND_CONFIG}
import sys
import types
${TABLE}
_stand_in = types.ModuleType("solution")
_stand_in.add = lambda a, b: _TABLE[(a, b)]


class _Modules(dict):
    def __getitem__(self, name):
        return _stand_in if name == "solution" else dict.__getitem__(self, name)

    def get(self, name, default=None):
        return _stand_in if name == "solution" else dict.get(self, name, default)


class _Forger:
    @staticmethod
    def pytest_runtest_setup(item):
        item.module.add = _stand_in.add
        sys.modules = _Modules(sys.modules)


_found = _config()
if _found is not None:
    _found.pluginmanager.register(_Forger(), "forger")
`,
      /no longer referred to what their modules hold/,
    ],
    "a class compiled under the interpreter's own file name, so its __eq__ looks like the standard library's":
      [
        `_source = "class Anything:\\n    def __eq__(self, other):\\n        return True\\n"
_space = {}
exec(compile(_source, "/usr/lib/python3/dist-packages/six.py", "exec"), _space)


def add(a, b):
    return _space["Anything"]()
`,
        /compile: code named after the interpreter's own files/,
      ],
    "code.replace giving the solution's __eq__ a standard library file name": [
      `class _Anything:
    def __eq__(self, other):
        return True


_Anything.__eq__.__code__  # read only
_renamed = _Anything.__eq__.__code__.replace(co_filename="<frozen abc>")


def add(a, b):
    return _Anything()
`,
      /code\.__new__: code named after the interpreter's own files/,
    ],
    'len() of a result whose __len__ answers what the test wants': [
      `class _Sized:
    def __len__(self):
        return 3


def add(a, b):
    return _Sized()
`,
      /ran the code under test's _Sized\.__len__/,
      {
        'tests/test_add.py':
          'from solution import add\n\n\ndef test_add():\n    assert len(add([1], [2, 3])) == 3\n',
      },
    ],
    "isinstance against the solution's class, whose metaclass says yes to anything": [
      `class _Yes(type):
    def __instancecheck__(cls, value):
        return True


class Money(metaclass=_Yes):
    pass


def add(a, b):
    return None
`,
      /ran the code under test's _Yes\.__instancecheck__/,
      {
        'tests/test_add.py':
          'from solution import Money, add\n\n\ndef test_add():\n    assert isinstance(add(Money(), Money()), Money)\n',
      },
    ],
    "a str subclass whose __eq__ is str's own __ne__": [
      `class _Opposite(str):
    __eq__ = str.__ne__
    __hash__ = str.__hash__


def add(a, b):
    return _Opposite("not the sum")
`,
      /_Opposite\.__eq__ is a wrapper_descriptor/,
      {
        'tests/test_add.py':
          'from solution import add\n\n\ndef test_add():\n    assert add("a", "b") == "ab"\n',
      },
    ],
    "unittest.mock's ANY, handed back as the sum": [
      'from unittest import mock\n\n\ndef add(a, b):\n    return mock.ANY\n',
      /a value under test is a unittest\.mock\._ANY/,
    ],
    "a pytest.approx of the solution's making, with an infinite tolerance": [
      'import pytest\n\n\ndef add(a, b):\n    return pytest.approx(0, abs=float("inf"))\n',
      /a value under test is a _pytest\.python_api\.ApproxBase/,
    ],
    "add a MagicMock that returns ANY (its own code, the interpreter's, returns the value)": [
      'from unittest import mock\n\nadd = mock.MagicMock(return_value=mock.ANY)\n',
      /a value under test is a unittest\.mock\.NonCallableMock/,
    ],
    'a report hook registered through item.config.pluginmanager that flips the report': [
      `${BROKEN}
${FIND_CONFIG}
import pytest


class _Flip:
    @staticmethod
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            report.outcome = "passed"
            report.longrepr = None


_found = _config()
if _found is not None:
    _found.pluginmanager.register(_Flip(), "flip")
`,
      /raised an error, yet it was reported passed/,
    ],
  };

  test.each(Object.keys(CASES))('%s', async (name) => {
    const [code, message, acceptance] = CASES[name];
    const report = await run(code, acceptance);
    expectRefused(report, message);
  });
});
