/**
 * aca's reporters inside the test process, written out as plain files at run time (see
 * runner-files.ts), because pytest imports plugins by module name and Jest loads reporters
 * with require(), and the build does not copy .py or .js files to dist. Inside the sandbox
 * they are mounted read-only, next to nothing the tests can write.
 *
 * Both write to fd 3, the results channel (results-channel.ts), one JSON line per event.
 */

/**
 * The pytest plugin, loaded with `-p aca_results` before any conftest.py. Per test phase it
 * sends pytest's final outcome and, separately, what the phase itself raised: the latter is
 * read from the call information that pytest's runner hands to `pytest_runtest_makereport`,
 * beneath every hook that may rewrite the report, so a conftest that flips a failure into a
 * pass shows up as a phase that raised yet was reported passed.
 */
export const PYTEST_RESULTS_PLUGIN = String.raw`
import json
import os

import pytest

try:
    # A private copy that child processes do not inherit; fd 3 itself is closed so that tests
    # and the processes they start do not find the channel at its well-known number.
    _FD = os.dup(3)
    os.set_inheritable(_FD, False)
    os.close(3)
except OSError:
    _FD = None

_raw = {}


def _send(record):
    if _FD is None:
        return
    data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    while data:
        data = data[os.write(_FD, data):]


def _raised(call):
    info = call.excinfo
    if info is None:
        return "passed"
    if info.errisinstance(pytest.skip.Exception) and not info.errisinstance(pytest.xfail.Exception):
        return "skipped"
    return "failed"


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item, call):
    _raw[(item.nodeid, call.when)] = _raised(call)
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    _send({
        "t": "case",
        "id": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "raw": _raw.pop((report.nodeid, report.when), "unknown"),
        "xfail": hasattr(report, "wasxfail"),
    })


@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report):
    if report.failed:
        _send({"t": "collect_error", "id": report.nodeid})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _send({"t": "done", "exit": int(exitstatus)})
`;

/**
 * The Jest reporter, added after Jest's default one. Jest calls it in its main process as
 * each test case ends and once at the end of the run.
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
  onTestCaseResult(test, result) {
    send({ t: 'case', file: test.path, name: result.fullName, status: result.status });
  }

  onTestFileResult(test, result) {
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
