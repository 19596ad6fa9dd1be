import { percentText } from '../../../src/shared/pass-rate';
import { formatPassRate } from '../../../src/cli/progress';

describe('pass rates as people read them', () => {
  test.each([
    [1, '100%'],
    [0, '0%'],
    [0.5, '50%'],
    [0.996, '99.6%'],
    [735 / 736, '99.8%'],
    [0.9999, '99.9%'],
    [0.99999, '99.9%'],
    [0.994, '99%'],
    [0.004, '0.4%'],
    [0.0001, '0.01%'],
  ])('%p reads %s', (rate, shown) => {
    expect(percentText(rate)).toBe(shown);
  });

  test('no rate below 1 ever reads 100 %, no rate above 0 reads 0 %', () => {
    for (let failed = 1; failed <= 3; failed++) {
      for (const total of [10, 199, 200, 201, 736, 999, 1000, 5000, 123_456]) {
        const rate = (total - failed) / total;
        expect(percentText(rate)).not.toMatch(/^100(\.0+)?%$/);
        expect(percentText(failed / total)).not.toMatch(/^0(\.0+)?%$/);
      }
    }
  });

  test('the CLI shows a run without a rate as "-"', () => {
    expect(formatPassRate(null)).toBe('-');
    expect(formatPassRate(0.996)).toBe('99.6%');
  });
});
