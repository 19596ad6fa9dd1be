# The pytest side of the pytest verdict: the plugin that tells the audit hook which test is running
# and what pytest reported, through audit events only. Its text goes before pytest_verdict.py's in
# the verdict process's `-c` argument (runners/pytest-runner.ts); `_aca_plugin` is called once, from
# the hook's install. Whatever code under test does to the plugin cannot make the hook say a test
# body returned.
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_plugin(pytest, unittest, audit):
    raws = {}

    skip_types = (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)
    xfail_type = pytest.xfail.Exception

    class AcaVerdict:
        """The pytest side: tells the audit hook where each test is. It holds nothing to forge with."""

        @staticmethod
        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_call(item, audit=audit):
            audit("aca.begin", item.nodeid)
            try:
                yield
            finally:
                audit("aca.end", item.nodeid)

        @staticmethod
        @pytest.hookimpl(hookwrapper=True, trylast=True)
        def pytest_runtest_makereport(item, call, raws=raws):
            info = call.excinfo
            if info is None:
                raws[(item.nodeid, call.when)] = ("passed", None)
            else:
                skipping = info.errisinstance(skip_types)
                outcome = "skipped" if skipping and not info.errisinstance(xfail_type) else "failed"
                raws[(item.nodeid, call.when)] = (outcome, info.tb if skipping else None)
            yield

        @staticmethod
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(report, audit=audit, raws=raws):
            raw = raws.pop((report.nodeid, report.when), ("unknown", None))
            audit("aca.case", report.nodeid, report.when, report.outcome, raw[0],
                  hasattr(report, "wasxfail"), raw[1])

        @staticmethod
        @pytest.hookimpl(tryfirst=True)
        def pytest_collectreport(report, audit=audit):
            if report.failed or report.skipped:
                audit("aca.collect", report.nodeid, report.outcome)

        @staticmethod
        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(session, exitstatus, audit=audit):
            audit("aca.done", int(exitstatus))

    return AcaVerdict
