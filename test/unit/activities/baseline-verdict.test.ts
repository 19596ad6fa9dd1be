import { judgeAgainstBaseline } from '../../../src/activities/baseline-verdict';
import type { TestCaseResult, TestRunReport } from '../../../src/shared/types';

type Status = TestCaseResult['status'];

function report(cases: Array<[string, Status]>, more: Partial<TestRunReport> = {}): TestRunReport {
  const count = (s: Status) => cases.filter(([, status]) => status === s).length;
  const passed = count('passed');
  const failed = count('failed');
  const errors = count('error');
  return {
    outcome: 'completed',
    passed,
    failed,
    errors,
    skipped: count('skipped'),
    passRate: passed / Math.max(1, passed + failed + errors),
    cases: cases.map(([name, status]) => ({ name, status })),
    output: '',
    cutBytes: 0,
    durationMs: 1,
    ...more,
  } as TestRunReport;
}

describe('the verdict of a test run against its baseline', () => {
  test('a run that did not complete is never a success', () => {
    for (const outcome of [
      'timeout',
      'collection_error',
      'no_tests',
      'sandbox_error',
      'tampered',
      'limit_exceeded',
    ] as const) {
      const now = report([['t::a', 'passed']], { outcome });
      expect(judgeAgainstBaseline(now, null, [])).toEqual({
        success: false,
        regressions: [],
        preexisting: [],
      });
      expect(judgeAgainstBaseline(now, report([['t::a', 'passed']]), [])).toEqual({
        success: false,
        regressions: [],
        preexisting: [],
      });
    }
  });

  test('without a baseline every test must pass, and at least one must run', () => {
    const verdict = (cases: Array<[string, Status]>, more: Partial<TestRunReport> = {}) =>
      judgeAgainstBaseline(report(cases, more), null, []).success;
    expect(
      verdict([
        ['a', 'passed'],
        ['b', 'passed'],
      ]),
    ).toBe(true);
    expect(
      verdict([
        ['a', 'passed'],
        ['b', 'skipped'],
      ]),
    ).toBe(true);
    expect(
      verdict([
        ['a', 'passed'],
        ['b', 'failed'],
      ]),
    ).toBe(false);
    expect(
      verdict([
        ['a', 'passed'],
        ['b', 'error'],
      ]),
    ).toBe(false);
    expect(verdict([])).toBe(false);
    expect(verdict([['a', 'skipped']])).toBe(false);
    // The counts decide, not the cases alone: a report whose counts disagree is not trusted.
    expect(verdict([['a', 'passed']], { failed: 1 })).toBe(false);
    expect(verdict([['a', 'passed']], { errors: 1 })).toBe(false);
    expect(verdict([['a', 'passed']], { passRate: 0.99 })).toBe(false);
    expect(verdict([['a', 'skipped']], { passRate: 1 })).toBe(false);
    expect(judgeAgainstBaseline(report([['a', 'failed']]), null, [])).toEqual({
      success: false,
      regressions: [],
      preexisting: [],
    });
  });

  test('a test failing at the baseline may still fail; one that passed there must still pass', () => {
    const baseline = report([
      ['t::old_fail', 'failed'],
      ['t::old_error', 'error'],
      ['t::b_pass', 'passed'],
      ['t::a_pass', 'passed'],
      ['t::skipped', 'skipped'],
    ]);
    expect(
      judgeAgainstBaseline(
        report([
          ['t::old_fail', 'failed'],
          ['t::old_error', 'failed'],
          ['t::b_pass', 'passed'],
          ['t::a_pass', 'passed'],
          ['t::skipped', 'failed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({ success: false, regressions: [], preexisting: ['t::old_error', 't::old_fail'] });
    expect(
      judgeAgainstBaseline(
        report([
          ['t::old_fail', 'error'],
          ['t::old_error', 'error'],
          ['t::b_pass', 'passed'],
          ['t::a_pass', 'passed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({ success: true, regressions: [], preexisting: ['t::old_error', 't::old_fail'] });
    // Failing, skipped or gone: each a regression, listed in order.
    expect(
      judgeAgainstBaseline(
        report([
          ['t::old_fail', 'passed'],
          ['t::b_pass', 'skipped'],
          ['t::new', 'passed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({ success: false, regressions: ['t::a_pass', 't::b_pass'], preexisting: [] });
  });

  test("the user's acceptance tests must pass even if they failed at the baseline", () => {
    const baseline = report([
      ['tests/test_acc.py::test_one', 'failed'],
      ['tests/test_acc.py', 'error'],
      ['tests/test_acc.pyc::x', 'failed'],
      ['t::p', 'passed'],
    ]);
    const now = (name: string) =>
      judgeAgainstBaseline(
        report([
          [name, 'failed'],
          ['t::p', 'passed'],
        ]),
        baseline,
        ['tests/test_acc.py'],
      );
    expect(now('tests/test_acc.py::test_one')).toEqual({ success: false, regressions: [], preexisting: [] });
    expect(now('tests/test_acc.py')).toEqual({ success: false, regressions: [], preexisting: [] });
    // A name that only starts like an acceptance file is not one.
    expect(now('tests/test_acc.pyc::x')).toEqual({
      success: true,
      regressions: [],
      preexisting: ['tests/test_acc.pyc::x'],
    });
  });

  test('a test run several times (parametrised under one name) regresses when fewer of its runs pass', () => {
    const baseline = report([
      ['t::p', 'passed'],
      ['t::p', 'passed'],
      ['t::p', 'failed'],
    ]);
    expect(
      judgeAgainstBaseline(
        report([
          ['t::p', 'passed'],
          ['t::p', 'failed'],
          ['t::p', 'failed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({ success: false, regressions: ['t::p'], preexisting: ['t::p'] });
    expect(
      judgeAgainstBaseline(
        report([
          ['t::p', 'passed'],
          ['t::p', 'passed'],
          ['t::p', 'failed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({ success: true, regressions: [], preexisting: ['t::p'] });
  });

  test('a baseline that did not complete excuses nothing and finds no regression', () => {
    const baseline = report(
      [
        ['t::a', 'failed'],
        ['t::b', 'passed'],
      ],
      { outcome: 'timeout' },
    );
    expect(
      judgeAgainstBaseline(
        report([
          ['t::a', 'failed'],
          ['t::c', 'passed'],
        ]),
        baseline,
        [],
      ),
    ).toEqual({
      success: false,
      regressions: [],
      preexisting: [],
    });
    expect(judgeAgainstBaseline(report([['t::c', 'passed']]), baseline, [])).toEqual({
      success: true,
      regressions: [],
      preexisting: [],
    });
  });

  test('with a baseline at least one test must pass', () => {
    const baseline = report([['t::a', 'failed']]);
    expect(judgeAgainstBaseline(report([['t::a', 'failed']]), baseline, [])).toEqual({
      success: false,
      regressions: [],
      preexisting: ['t::a'],
    });
  });
});
