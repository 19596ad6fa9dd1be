/**
 * A pass rate as a percentage for people to read. Whole percentages, except that a rate below 1
 * is never shown as 100 % (nor a rate above 0 as 0 %): near either end it keeps one decimal, or
 * as many as it takes to differ from the end, so "all tests pass" is only ever said when they do.
 */
export function percentText(rate: number): string {
  if (!Number.isFinite(rate)) return '-';
  const whole = Math.round(rate * 100);
  if ((whole === 100 && rate < 1) || (whole === 0 && rate > 0)) {
    for (let digits = 1; digits <= 6; digits++) {
      const factor = 10 ** digits;
      // Cut, never rounded: 0.9996 reads 99.9 % rather than 100.0 %, 0.0001 reads 0.01 %.
      const shown = Math.floor(rate * 100 * factor) / factor;
      if (shown > 0 && shown < 100) return `${shown.toFixed(digits)}%`;
    }
    return rate > 0.5 ? '>99.9999%' : '<0.0001%';
  }
  return `${whole}%`;
}

/**
 * A run's pass rate for people: `-` before any test run, `no tests run` when its last test run
 * counted no test (a rate of 0 there says nothing about the code), else percentText.
 */
export function passRateText(
  rate: number | null,
  tests?: { passed: number; failed: number; errors: number },
): string {
  if (rate === null) return '-';
  if (tests && tests.passed + tests.failed + tests.errors === 0) return 'no tests run';
  return percentText(rate);
}
