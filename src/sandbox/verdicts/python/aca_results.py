# aca's pytest plugin (module `aca_results`), written into the runner folder (launch/runner-files.ts),
# mounted read-only in the sandbox, and imported and registered by pytest_launcher.py before any
# conftest.py. It writes to fd 3, the results channel (verdicts/results-channel.ts), one JSON line
# per event.
#
# Per test phase it
# sends pytest's final outcome and, separately, what the phase itself raised: the latter is
# read from the call information that pytest's runner hands to `pytest_runtest_makereport`,
# beneath every hook that may rewrite the report, so a conftest that flips a failure into a
# pass shows up as a phase that raised yet was reported passed.
#
# For the call phase of an acceptance test (the files named in `ACA_ACCEPTANCE_TESTS`) it also
# sends whether the test's own function ran to its end: a profile function, set for the length
# of the call phase, watches for a frame running the test's code to return rather than raise.
# That code must equal what the plugin compiled from the read-only original while it loaded,
# before any conftest.py could patch pytest. A test whose call hooks, `runtest`, `pytest_pyfunc_call`
# or function object were replaced, or whose failure a wrapper swallowed, is thereby reported
# as a body that did not run or that raised.

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
