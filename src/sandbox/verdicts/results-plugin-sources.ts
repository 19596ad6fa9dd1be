/**
 * aca's reporters inside the test process, written out as plain files at run time (see
 * runner-files.ts), because pytest imports plugins by module name and Jest loads reporters
 * with require(), and the build does not copy .py or .js files to dist. Inside the sandbox
 * they are mounted read-only, next to nothing the tests can write.
 *
 * Both write to fd 3, the results channel (results-channel.ts), one JSON line per event.
 */

/**
 * The pytest plugin, imported and registered by PYTEST_LAUNCHER before any conftest.py. Per test phase it
 * sends pytest's final outcome and, separately, what the phase itself raised: the latter is
 * read from the call information that pytest's runner hands to `pytest_runtest_makereport`,
 * beneath every hook that may rewrite the report, so a conftest that flips a failure into a
 * pass shows up as a phase that raised yet was reported passed.
 *
 * For the call phase of an acceptance test (the files named in `ACA_ACCEPTANCE_TESTS`) it also
 * sends whether the test's own function ran to its end: a profile function, set for the length
 * of the call phase, watches for a frame running the test's code to return rather than raise.
 * That code must equal what the plugin compiled from the read-only original while it loaded,
 * before any conftest.py could patch pytest. A test whose call hooks, `runtest`, `pytest_pyfunc_call`
 * or function object were replaced, or whose failure a wrapper swallowed, is thereby reported
 * as a body that did not run or that raised.
 */
export const PYTEST_RESULTS_PLUGIN = String.raw`
import dis
import json
import os
import sys

import pytest


def _install():
    # Everything the hooks use is bound here, while the plugin loads (before any conftest.py is
    # imported), and none of it is a module global: a conftest that rebinds names in this module,
    # in json, os, sys or pytest finds that the hooks do not look them up again.
    dumps = json.dumps
    loads = json.loads
    write = os.write
    setprofile = sys.setprofile
    getprofile = sys.getprofile
    builtin_compile = compile
    builtin_open = open
    skip_exception = pytest.skip.Exception
    xfail_exception = pytest.xfail.Exception
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
        import ast
        parse = ast.parse
    except ImportError:
        rewrite_asserts = None

    try:
        # A private copy that child processes do not inherit; fd 3 itself is closed so that tests
        # and the processes they start do not find the channel at its well-known number.
        fd = os.dup(3)
        os.set_inheritable(fd, False)
        os.close(3)
    except OSError:
        fd = None

    # The code each acceptance test may run as, compiled now from the read-only original, with
    # pytest's assertion rewriting as it stands before any conftest can patch it, and plainly
    # (for a module that opts out of rewriting). A test body that runs must equal one of these,
    # bytecode, constants and names: a no-op put in its place, or a rewriting that drops the
    # asserts, does not.
    expected = {}
    try:
        pairs = loads(os.environ.pop("ACA_ACCEPTANCE_TESTS", "[]"))
    except ValueError:
        pairs = []

    def functions_in(code, into):
        for const in code.co_consts:
            if type(const) is type(code):
                into.setdefault(const.co_name, []).append(const)
                functions_in(const, into)

    for rel, full in pairs:
        codes = {}
        try:
            with builtin_open(full, "rb") as f:
                source = f.read()
            functions_in(builtin_compile(source, full, "exec", dont_inherit=True), codes)
            if rewrite_asserts is not None:
                tree = parse(source, filename=full)
                rewrite_asserts(tree, source, full, None)
                functions_in(builtin_compile(tree, full, "exec", dont_inherit=True), codes)
        except Exception:
            pass
        expected[rel] = codes

    returning = frozenset(dis.opmap[n] for n in ("RETURN_VALUE", "RETURN_CONST") if n in dis.opmap)
    suspending = frozenset(dis.opmap[n] for n in ("YIELD_VALUE",) if n in dis.opmap)

    raw = {}
    body = {}

    def candidates(nodeid):
        """The code objects the test named nodeid may run as, or None when it is not an acceptance test."""
        # Parameters come last and may hold anything, "::" included: the name is read before them.
        parts = nodeid.split("[", 1)[0].split("::")
        codes = expected.get(parts[0])
        if codes is None or len(parts) < 2:
            return None
        return codes.get(parts[-1]) or None

    def send(record):
        if fd is None:
            return
        data = (dumps(record, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[write(fd, data):]

    def raised(call):
        info = call.excinfo
        if info is None:
            return "passed"
        if info.errisinstance(skip_exception) and not info.errisinstance(xfail_exception):
            return "skipped"
        return "failed"

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(item):
        # Watches, for the length of the call phase, for the acceptance test's own code to return
        # (rather than raise) in a frame of its own. Only the interpreter makes such frames; a
        # hook, a replaced runtest or a wrapper that swallows what the test raised shows up as a
        # body that did not run or that raised.
        nodeid = item.nodeid
        codes = candidates(nodeid)
        if codes is None:
            yield
            return
        seen = {"ran": False, "raised": False}
        known = []

        def profile(frame, event, arg):
            if event != "return":
                return
            code = frame.f_code
            if not any(code is k for k in known):
                if not any(code == c for c in codes):
                    return
                known.append(code)
            op = code.co_code[frame.f_lasti]
            if op in returning:
                seen["ran"] = True
            elif op not in suspending:
                seen["raised"] = True

        before = getprofile()
        setprofile(profile)
        try:
            yield
        finally:
            if getprofile() is profile:
                setprofile(before)
            body[nodeid] = "ran" if seen["ran"] else "raised" if seen["raised"] else "not_run"

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(item, call):
        raw[(item.nodeid, call.when)] = raised(call)
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(report):
        nodeid = report.nodeid
        when = report.when
        if when != "call" or candidates(nodeid) is None:
            ran = "unknown"
        else:
            ran = body.pop(nodeid, "not_run")
        send({
            "t": "case",
            "id": nodeid,
            "when": when,
            "outcome": report.outcome,
            "raw": raw.pop((nodeid, when), "unknown"),
            "body": ran,
            "xfail": hasattr(report, "wasxfail"),
        })

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(report):
        if report.failed:
            send({"t": "collect_error", "id": report.nodeid})

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session, exitstatus):
        send({"t": "done", "exit": int(exitstatus)})

    return {
        "pytest_runtest_call": pytest_runtest_call,
        "pytest_runtest_makereport": pytest_runtest_makereport,
        "pytest_runtest_logreport": pytest_runtest_logreport,
        "pytest_collectreport": pytest_collectreport,
        "pytest_sessionfinish": pytest_sessionfinish,
    }


globals().update(_install())
del _install
`;

/**
 * How aca starts pytest: `python -c PYTEST_LAUNCHER <pytest's arguments>`, in place of
 * `python -m pytest`. Both put the working folder first on `sys.path`, and the working folder is the
 * workspace, which the code under test writes: a `pytest.py`, `pytest/`, `_pytest/`, `aca_results.py`
 * or `json.py` there would be imported in place of pytest, aca's plugin or a module the plugin binds,
 * and could forge the channel and the report before the plugin ever loaded. `-P` is no answer for
 * every interpreter (a project's venv may predate 3.11); instead the launcher, which `-c` runs before
 * anything is imported from that first entry, drops it, imports pytest, its built-in plugins and
 * aca's from the interpreter's own paths (Debian's, or the venv's site-packages, read-only in the
 * sandbox) and `PYTHONPATH` (aca's runner folder, read-only), registers aca's plugin ahead of every
 * other (so neither a module nor an installed entry point by the name `aca_results` can stand in for
 * it), and only then puts the working folder first on `sys.path`, as `-m` does, for the project's
 * tests to import its modules. What the workspace supplies from then on is imported after the plugin
 * has bound what it uses, like a conftest.py. Written for any Python 3: no newer syntax.
 */
export const PYTEST_LAUNCHER = String.raw`
import sys

if sys.path and sys.path[0] == "":
    del sys.path[0]

import importlib
import os

import pytest
import _pytest.config

for name in _pytest.config.default_plugins:
    try:
        importlib.import_module("_pytest." + name)
    except ImportError:
        pass

import aca_results

sys.path.insert(0, os.getcwd())
try:
    code = pytest.main(sys.argv[1:], plugins=[aca_results])
    sys.stdout.flush()
except BrokenPipeError:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 1
raise SystemExit(int(code))
`;

/**
 * The Jest reporter, added after Jest's default one. Jest calls it in its main process as
 * each test case ends and once at the end of the run. Jest reports a case as it ends only when
 * the case ran (or is a todo): a skipped case, or one left out by a `.only` beside it, appears
 * only in its file's result, so those are sent when the file ends, each name as often as the file
 * lists it beyond what was already sent.
 */
export const JEST_RESULTS_REPORTER = String.raw`'use strict';
const fs = require('fs');

function send(record) {
  try {
    fs.writeSync(3, JSON.stringify(record) + '\n');
  } catch (err) {
    // The channel is gone: nothing more can be reported, and the worker reads silence as such.
  }
}

class AcaResultsReporter {
  constructor() {
    this.sent = new Map();
  }

  onTestCaseResult(test, result) {
    const names = this.sent.get(test.path) || new Map();
    this.sent.set(test.path, names);
    names.set(result.fullName, (names.get(result.fullName) || 0) + 1);
    send({ t: 'case', file: test.path, name: result.fullName, status: result.status });
  }

  onTestFileResult(test, result) {
    const names = this.sent.get(test.path) || new Map();
    this.sent.delete(test.path);
    for (const assertion of result.testResults || []) {
      const already = names.get(assertion.fullName) || 0;
      if (already > 0) names.set(assertion.fullName, already - 1);
      else send({ t: 'case', file: test.path, name: assertion.fullName, status: assertion.status });
    }
    if (result.testExecError) send({ t: 'file_error', file: test.path });
  }

  onRunComplete(_contexts, results) {
    send({ t: 'done', success: Boolean(results.success) });
  }

  getLastError() {
    return undefined;
  }
}

module.exports = AcaResultsReporter;
`;
